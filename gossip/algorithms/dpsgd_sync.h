#pragma once
// Mode gossip without a codec, D-PSGD (Lian et al. 2017): one mixing round
// x_i ← Σ_j W_ij x_j over the configured topology laid over the view's members, with
// Metropolis–Hastings weights (gossip_average.h, mixing_schedule.h).
#include <cstdint>
#include <map>
#include <string>

#include "gossip/algorithms/gossip_average.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

/// The base of the algorithms built on one mixing round (GossipAverage) per round: D-PSGD
/// itself, gradient tracking, exact diffusion, quasi-global momentum and push-sum. It holds
/// the model and the mixing, and reports the mixing's drops.
class NeighbourSync : public SyncAlgorithm {
 public:
  std::map<std::string, std::uint64_t> drops() const override { return gossip_.drops(); }

 protected:
  /// Mixing over the view's schedule (view_schedule).
  explicit NeighbourSync(const SyncSetup& setup);
  NeighbourSync(const SyncSetup& setup, MixingSchedule schedule);

  protocols::Span<float> model_;
  GossipAverage gossip_;
};

class DpsgdSync final : public NeighbourSync {
 public:
  explicit DpsgdSync(const SyncSetup& setup) : NeighbourSync(setup) {}

 private:
  void round(double) override { gossip_.run(model_); }
};

/// The view's mixing schedule: the configured topology over the members, this peer at `rank`.
MixingSchedule view_schedule(const SyncSetup& setup);

}  // namespace starling::gossip
