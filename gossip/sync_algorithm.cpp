// The interface's boundary and the table of synchronous algorithms (gossip/sync_algorithm.h).
#include "gossip/sync_algorithm.h"

#include <algorithm>

#include "gossip/adaptive_compression_sync.h"
#include "gossip/allreduce_sync.h"
#include "gossip/choco_sync.h"
#include "gossip/compressed_allreduce_sync.h"
#include "gossip/error.h"
#include "gossip/gossip_sync.h"
#include "gossip/exact_diffusion_sync.h"
#include "gossip/gradient_tracking_sync.h"
#include "gossip/outer_optimizer_sync.h"
#include "gossip/push_sum_sync.h"
#include "gossip/quasi_global_momentum_sync.h"

namespace starling::gossip {
namespace {

// What the mode runs with: nothing more, a codec (with its density steered or not),
// quasi-global momentum, or an outer optimizer.
enum class Variant { plain, codec, adaptive_codec, quasi_global_momentum, outer_optimizer };

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
    {ExchangeMode::local_sgd, Variant::plain, true, make<AllreduceSync>},
    {ExchangeMode::local_sgd, Variant::codec, true, make<CompressedAllreduceSync>},
    {ExchangeMode::local_sgd, Variant::adaptive_codec, true, make<AdaptiveCompressionSync>},
    {ExchangeMode::local_sgd, Variant::outer_optimizer, true, make<OuterOptimizerSync>},
    {ExchangeMode::gossip, Variant::plain, false, make<GossipSync>},
    {ExchangeMode::gossip, Variant::codec, false, make<ChocoSync>},
    {ExchangeMode::gossip, Variant::adaptive_codec, false, make<AdaptiveCompressionSync>},
    {ExchangeMode::gossip, Variant::quasi_global_momentum, false, make<QuasiGlobalMomentumSync>},
    {ExchangeMode::gradient_tracking, Variant::plain, false, make<GradientTrackingSync>},
    {ExchangeMode::push_sum, Variant::plain, false, make<PushSumSync>},
    {ExchangeMode::exact_diffusion, Variant::plain, false, make<ExactDiffusionSync>},
};

Variant variant_of(const ExchangeSpec& spec) {
  if (spec.codec != "none") return spec.adaptive ? Variant::adaptive_codec : Variant::codec;
  if (spec.quasi_global_momentum > 0.0) return Variant::quasi_global_momentum;
  return spec.outer_lr != 1.0 || spec.outer_momentum > 0.0 ? Variant::outer_optimizer : Variant::plain;
}

}  // namespace

RoundResult SyncAlgorithm::run(double compute_seconds) {
  try {
    round(compute_seconds);
    return {};
  } catch (const MembershipChanged& e) {
    return {RoundResult::membership_changed, e.what()};
  } catch (const TimeoutError& e) {
    return {RoundResult::timed_out, e.what()};
  }
}

bool SyncAlgorithm::restore(const std::vector<float>& values) { return values.empty(); }

std::vector<float> PairState::values() const {
  if (!started) return {};
  std::vector<float> values(first);
  values.insert(values.end(), second.begin(), second.end());
  return values;
}

bool PairState::restore(const std::vector<float>& values) {
  const std::size_t n = first.size();
  if (values.size() != n + second.size()) return false;
  std::copy(values.begin(), values.begin() + static_cast<long>(n), first.begin());
  std::copy(values.begin() + static_cast<long>(n), values.end(), second.begin());
  started = true;
  return true;
}

std::unique_ptr<SyncAlgorithm> make_sync_algorithm(const SyncSetup& setup) {
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
