// A codec algorithm with its density steered (gossip/algorithms/adaptive_compression_sync.h).
#include "gossip/algorithms/adaptive_compression_sync.h"

#include <chrono>

#include "gossip/algorithms/choco_sync.h"
#include "gossip/algorithms/compressed_allreduce_sync.h"
#include "gossip/transport/error.h"

namespace starling::gossip {

AdaptiveCompressionSync::AdaptiveCompressionSync(const SyncSetup& s)
    : controller_(s.adaptive), on_adjust_(s.spec.on_adjust) {
  if (!controller_) STARLING_GOSSIP_THROW(InvalidArgument, "adaptive compression without its controller");
  if (s.spec.mode == ExchangeMode::gossip) inner_ = std::make_unique<ChocoSync>(s);
  else inner_ = std::make_unique<CompressedAllreduceSync>(s);
}

void AdaptiveCompressionSync::round(double compute_seconds) {
  const auto start = Transport::Clock::now();
  round_of(*inner_, compute_seconds);
  if (!inner_->last_round_compressed()) return;
  const double comm = std::chrono::duration<double>(Transport::Clock::now() - start).count();
  const DensityDecision decision = controller_->observe(compute_seconds, comm);
  if (!decision.changed) return;
  inner_->set_density(decision.density);
  if (on_adjust_) on_adjust_(decision.report);
}

}  // namespace starling::gossip
