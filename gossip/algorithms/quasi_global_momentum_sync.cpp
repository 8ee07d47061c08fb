// D-PSGD with quasi-global momentum (gossip/algorithms/quasi_global_momentum_sync.h).
#include "gossip/algorithms/quasi_global_momentum_sync.h"

#include <algorithm>

#include "gossip/algorithms/dpsgd_sync.h"
#include "gossip/transport/error.h"

namespace starling::gossip {
QuasiGlobalMomentumSync::QuasiGlobalMomentumSync(const SyncSetup& s)
    : NeighbourSync(s),
      momentum_(static_cast<float>(s.spec.quasi_global_momentum)),
      kept_(s.model.size()) {
  if (!(s.spec.quasi_global_momentum >= 0.0 && s.spec.quasi_global_momentum < 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "quasi-global momentum must lie in [0, 1)");
}

void QuasiGlobalMomentumSync::round(double) {
  const std::size_t n = model_.size();
  float* x = model_.data();
  // 1. The heavy-ball step with the quasi-global momentum (M = 0 while fresh).
  if (started_)
    for (std::size_t i = 0; i < n; ++i) x[i] -= momentum_ * velocity_[i];
  // 2. The D-PSGD round.
  gossip_.run(model_);
  // 3. M ← μ M + (1 − μ)(x̃ − x), x̃ ← x.
  if (started_)
    for (std::size_t i = 0; i < n; ++i) velocity_[i] = momentum_ * velocity_[i] + (1.0f - momentum_) * (start_[i] - x[i]);
  std::copy(x, x + n, start_.begin());
  started_ = true;
}

}  // namespace starling::gossip
