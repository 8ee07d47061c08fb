// D-PSGD with quasi-global momentum (gossip/quasi_global_momentum_sync.h).
#include "gossip/quasi_global_momentum_sync.h"

#include <algorithm>

#include "gossip/error.h"
#include "gossip/gossip_sync.h"

namespace starling::gossip {
namespace {

GossipOptions options_of(const SyncSetup& s) {
  GossipOptions g;
  g.timeout = s.spec.timeout;
  g.first_round = s.first_round;
  return g;
}

}  // namespace

QuasiGlobalMomentumSync::QuasiGlobalMomentumSync(const SyncSetup& s)
    : model_(s.model),
      gossip_(s.transport, s.members, view_schedule(s), options_of(s)),
      momentum_(static_cast<float>(s.spec.quasi_global_momentum)),
      start_(s.model.size()),
      velocity_(s.model.size()) {
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

std::vector<float> QuasiGlobalMomentumSync::state() const {
  if (!started_) return {};
  std::vector<float> values(start_);
  values.insert(values.end(), velocity_.begin(), velocity_.end());
  return values;
}

bool QuasiGlobalMomentumSync::restore(const std::vector<float>& values) {
  const std::size_t n = model_.size();
  if (values.size() != 2 * n) return false;
  std::copy(values.begin(), values.begin() + n, start_.begin());
  std::copy(values.begin() + n, values.end(), velocity_.begin());
  started_ = true;
  return true;
}

}  // namespace starling::gossip
