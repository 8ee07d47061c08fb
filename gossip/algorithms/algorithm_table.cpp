// The table of synchronous algorithms (gossip/algorithms/algorithm_table.h): the only file
// that includes every algorithm; a new algorithm is one file and one row here.
#include "gossip/algorithms/algorithm_table.h"

#include <string>

#include "gossip/algorithms/adaptive_compression_sync.h"
#include "gossip/algorithms/allreduce_sync.h"
#include "gossip/algorithms/byzantine_sync.h"
#include "gossip/algorithms/choco_sync.h"
#include "gossip/algorithms/clique_averaging_sync.h"
#include "gossip/algorithms/compressed_allreduce_sync.h"
#include "gossip/algorithms/deferred_outer_sync.h"
#include "gossip/algorithms/dpsgd_sync.h"
#include "gossip/algorithms/exact_diffusion_sync.h"
#include "gossip/algorithms/gradient_tracking_sync.h"
#include "gossip/algorithms/noloco_sync.h"
#include "gossip/algorithms/outer_optimizer_sync.h"
#include "gossip/algorithms/push_sum_sync.h"
#include "gossip/algorithms/quasi_global_momentum_sync.h"
#include "gossip/transport/error.h"

namespace starling::gossip {
namespace {

// What the mode runs with: nothing more, a codec (with its density steered or not),
// quasi-global momentum, an outer optimizer, or an outer step that defers slow peers.
enum class Variant { plain, codec, adaptive_codec, quasi_global_momentum, outer_optimizer, deferred_outer };

template <class Algorithm>
std::unique_ptr<SyncAlgorithm> make(const SyncSetup& setup) {
  return std::make_unique<Algorithm>(setup);
}

struct Row {
  ExchangeMode mode;
  Variant variant;
  bool common_model;  // every member ends a round with the same model
  std::unique_ptr<SyncAlgorithm> (*make)(const SyncSetup&);
};

// One row per algorithm: a new one is a file and a row here.
const Row kAlgorithms[] = {
    {ExchangeMode::allreduce, Variant::plain, true, make<AllreduceSync>},
    {ExchangeMode::allreduce, Variant::codec, true, make<CompressedAllreduceSync>},
    {ExchangeMode::allreduce, Variant::adaptive_codec, true, make<AdaptiveCompressionSync>},
    {ExchangeMode::allreduce, Variant::outer_optimizer, true, make<OuterOptimizerSync>},
    {ExchangeMode::allreduce, Variant::deferred_outer, true, make<DeferredOuterSync>},
    {ExchangeMode::local_sgd, Variant::plain, true, make<AllreduceSync>},
    {ExchangeMode::local_sgd, Variant::codec, true, make<CompressedAllreduceSync>},
    {ExchangeMode::local_sgd, Variant::adaptive_codec, true, make<AdaptiveCompressionSync>},
    {ExchangeMode::local_sgd, Variant::outer_optimizer, true, make<OuterOptimizerSync>},
    {ExchangeMode::local_sgd, Variant::deferred_outer, true, make<DeferredOuterSync>},
    {ExchangeMode::gossip, Variant::plain, false, make<DpsgdSync>},
    {ExchangeMode::gossip, Variant::codec, false, make<ChocoSync>},
    {ExchangeMode::gossip, Variant::adaptive_codec, false, make<AdaptiveCompressionSync>},
    {ExchangeMode::gossip, Variant::quasi_global_momentum, false, make<QuasiGlobalMomentumSync>},
    {ExchangeMode::gossip, Variant::outer_optimizer, false, make<NolocoSync>},
    {ExchangeMode::gradient_tracking, Variant::plain, false, make<GradientTrackingSync>},
    {ExchangeMode::push_sum, Variant::plain, false, make<PushSumSync>},
    {ExchangeMode::exact_diffusion, Variant::plain, false, make<ExactDiffusionSync>},
    {ExchangeMode::clique_averaging, Variant::plain, false, make<CliqueAveragingSync>},
};

// An outer optimizer takes its codec along (outer_optimizer_sync.h); over gossip it is
// NoLoCo's (noloco_sync.h).
Variant variant_of(const ExchangeSpec& spec) {
  if (spec.defer_slow_peers) return Variant::deferred_outer;
  if (spec.outer_lr != 1.0 || spec.outer_momentum > 0.0) return Variant::outer_optimizer;
  if (spec.codec != "none") return spec.adaptive ? Variant::adaptive_codec : Variant::codec;
  if (spec.quasi_global_momentum > 0.0) return Variant::quasi_global_momentum;
  return Variant::plain;
}

}  // namespace

std::unique_ptr<SyncAlgorithm> make_sync_algorithm(const SyncSetup& setup) {
  // An attacker crafts in D-PSGD's rounds (config_schema.cpp allows attackers only there).
  if (setup.spec.mode == ExchangeMode::gossip && attack_of(setup.spec.peers, setup.members[setup.rank]).crafts())
    return std::make_unique<ByzantineSync>(setup);
  const Variant variant = variant_of(setup.spec);
  for (const Row& row : kAlgorithms)
    if (row.mode == setup.spec.mode && row.variant == variant) return row.make(setup);
  STARLING_GOSSIP_THROW(InvalidArgument, std::string("no synchronous algorithm for exchange mode ") +
                                             exchange_mode_name(setup.spec.mode) + " with codec " + setup.spec.codec);
}

bool common_model(ExchangeMode mode) {
  for (const Row& row : kAlgorithms)
    if (row.mode == mode) return row.common_model;
  return false;
}

}  // namespace starling::gossip
