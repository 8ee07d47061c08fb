// The interface's boundary and the table of synchronous algorithms (gossip/sync_algorithm.h).
#include "gossip/sync_algorithm.h"

#include "gossip/adaptive_compression_sync.h"
#include "gossip/allreduce_sync.h"
#include "gossip/choco_sync.h"
#include "gossip/compressed_allreduce_sync.h"
#include "gossip/error.h"
#include "gossip/gossip_sync.h"
#include "gossip/gradient_tracking_sync.h"

namespace starling::gossip {
namespace {

enum class Compression { none, fixed, adaptive };

template <class Algorithm>
std::unique_ptr<SyncAlgorithm> make(const SyncSetup& setup) {
  return std::make_unique<Algorithm>(setup);
}

struct Row {
  ExchangeMode mode;
  Compression compression;
  bool common_model;  // every member ends a round with the same model
  std::unique_ptr<SyncAlgorithm> (*make)(const SyncSetup&);
};

// One row per algorithm: a new one is a file and a row here.
const Row kAlgorithms[] = {
    {ExchangeMode::allreduce, Compression::none, true, make<AllreduceSync>},
    {ExchangeMode::allreduce, Compression::fixed, true, make<CompressedAllreduceSync>},
    {ExchangeMode::allreduce, Compression::adaptive, true, make<AdaptiveCompressionSync>},
    {ExchangeMode::local_sgd, Compression::none, true, make<AllreduceSync>},
    {ExchangeMode::local_sgd, Compression::fixed, true, make<CompressedAllreduceSync>},
    {ExchangeMode::local_sgd, Compression::adaptive, true, make<AdaptiveCompressionSync>},
    {ExchangeMode::gossip, Compression::none, false, make<GossipSync>},
    {ExchangeMode::gossip, Compression::fixed, false, make<ChocoSync>},
    {ExchangeMode::gossip, Compression::adaptive, false, make<AdaptiveCompressionSync>},
    {ExchangeMode::gradient_tracking, Compression::none, false, make<GradientTrackingSync>},
};

Compression compression_of(const ExchangeSpec& spec) {
  if (spec.codec == "none") return Compression::none;
  return spec.adaptive ? Compression::adaptive : Compression::fixed;
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

std::unique_ptr<SyncAlgorithm> make_sync_algorithm(const SyncSetup& setup) {
  const Compression compression = compression_of(setup.spec);
  for (const Row& row : kAlgorithms)
    if (row.mode == setup.spec.mode && row.compression == compression) return row.make(setup);
  STARLING_GOSSIP_THROW(InvalidArgument, std::string("no synchronous algorithm for exchange mode ") +
                                             exchange_mode_name(setup.spec.mode) + " with codec " + setup.spec.codec);
}

bool common_model(ExchangeMode mode) {
  for (const Row& row : kAlgorithms)
    if (row.mode == mode) return row.common_model;
  return false;
}

}  // namespace starling::gossip
