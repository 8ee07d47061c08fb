// Push-sum (SGP) rounds over the view (gossip/algorithms/push_sum_sync.h).
#include "gossip/algorithms/push_sum_sync.h"

#include <algorithm>
#include <cmath>

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {

PushSumSync::PushSumSync(const SyncSetup& s) : PushSumSync(s, view_schedule(s)) {}

PushSumSync::PushSumSync(const SyncSetup& s, MixingSchedule schedule)
    : NeighbourSync(s, std::move(schedule)), mass_(s.model.size() + 1) {}

void PushSumSync::round(double) {
  const std::size_t n = model_.size();
  float* x = mass_.data();
  float& w = mass_[n];
  const float* z = model_.data();
  // 1. Fresh: w = 1, x = z. Else the local steps' change z − x/w goes to the numerator
  //    (SGP applies the step to x, the gradient taken at z).
  if (!started_) {
    std::copy(z, z + n, x);
    w = 1.0f;
    started_ = true;
  } else {
    for (std::size_t i = 0; i < n; ++i) x[i] += z[i] - x[i] / w;
  }
  // 2. Keep a share of (x, w), push the rest, add what the in-neighbours pushed.
  gossip_.run(protocols::Span<float>{mass_.data(), mass_.size()});
  // 3. The de-biased model.
  for (std::size_t i = 0; i < n; ++i) model_[i] = x[i] / w;
}

std::vector<float> PushSumSync::state() const { return started_ ? mass_ : std::vector<float>{}; }

bool PushSumSync::restore(const std::vector<float>& values) {
  if (values.size() != mass_.size() || !std::isfinite(values.back()) || !(values.back() > 0.0f)) return false;
  mass_ = values;
  started_ = true;
  return true;
}

}  // namespace starling::gossip
