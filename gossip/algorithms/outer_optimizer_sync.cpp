// SlowMo / DiLoCo's outer step on the all-reduced model (gossip/algorithms/outer_optimizer_sync.h).
#include "gossip/algorithms/outer_optimizer_sync.h"

#include <algorithm>

#include "gossip/transport/error.h"

namespace starling::gossip {

OuterOptimizerSync::OuterOptimizerSync(const SyncSetup& s)
    : model_(s.model),
      allreduce_(s),
      lr_(static_cast<float>(s.spec.outer_lr)),
      momentum_(static_cast<float>(s.spec.outer_momentum)),
      nesterov_(s.spec.outer_nesterov),
      kept_(s.model.size()) {
  if (!(s.spec.outer_lr > 0.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "the outer learning rate must be positive");
  if (!(s.spec.outer_momentum >= 0.0 && s.spec.outer_momentum < 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "the outer momentum must lie in [0, 1)");
}

void OuterOptimizerSync::round(double compute_seconds) {
  round_of(allreduce_, compute_seconds);  // the model is now x̄
  if (started_) return step();
  // Fresh: this round was a plain all-reduce, from which every member starts together.
  std::copy(model_.begin(), model_.end(), start_.begin());
  std::fill(velocity_.begin(), velocity_.end(), 0.0f);
  started_ = true;
}

// Δ = x₀ − x̄, u ← βu + Δ, then x₀ ← x̄ + c with c = Δ − α(Δ + βu) (Nesterov) or Δ − αu.
void OuterOptimizerSync::step() {
  const std::size_t n = model_.size();
  float* x = model_.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float change = start_[i] - x[i];
    velocity_[i] = momentum_ * velocity_[i] + change;
    const float correction = change - lr_ * (nesterov_ ? change + momentum_ * velocity_[i] : velocity_[i]);
    // x̄ + 0 would turn a −0 of x̄ into +0: a zero correction keeps x̄'s bits.
    if (correction != 0.0f) x[i] += correction;
    start_[i] = x[i];
  }
}

}  // namespace starling::gossip
