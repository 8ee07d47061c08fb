// Exact diffusion with local steps (gossip/algorithms/exact_diffusion_sync.h).
#include "gossip/algorithms/exact_diffusion_sync.h"

#include <algorithm>

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {

MixingSchedule lazy_schedule(MixingSchedule schedule) {
  return [schedule = std::move(schedule)](std::uint64_t round) {
    MixingPlan plan = schedule(round);
    plan.self_weight = 0.5 * (1.0 + plan.self_weight);
    for (auto& from : plan.receive_from) from.second *= 0.5;
    return plan;
  };
}

ExactDiffusionSync::ExactDiffusionSync(const SyncSetup& s)
    : NeighbourSync(s, lazy_schedule(view_schedule(s))),
      kept_(s.model.size()) {}

void ExactDiffusionSync::round(double) {
  const std::size_t n = model_.size();
  float* x = model_.data();
  if (!started_) std::copy(x, x + n, reached_.begin());  // ψ̃ = ψ: φ = ψ (see the header)
  // φ = ψ + x̃ − ψ̃ in place of ψ, keeping ψ as the next ψ̃.
  for (std::size_t i = 0; i < n; ++i) {
    const float psi = x[i];
    if (started_) x[i] = psi + returned_[i] - reached_[i];
    reached_[i] = psi;
  }
  gossip_.run(model_);
  std::copy(x, x + n, returned_.begin());
  started_ = true;
}

}  // namespace starling::gossip
