// Gradient tracking with local steps (gossip/algorithms/gradient_tracking_sync.h).
#include "gossip/algorithms/gradient_tracking_sync.h"

#include <algorithm>

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {
GradientTrackingSync::GradientTrackingSync(const SyncSetup& s)
    : NeighbourSync(s),
      mixed_(2 * s.model.size()),
      change_(s.model.size()),
      new_change_(s.model.size()) {}

void GradientTrackingSync::round(double) {
  if (tracking_) track();
  else start_tracking();
}

// A plain D-PSGD round on [x | 0]; the tracker starts at zero (see the header).
void GradientTrackingSync::start_tracking() {
  const std::size_t n = model_.size();
  std::copy(model_.begin(), model_.end(), mixed_.begin());
  std::fill(mixed_.begin() + n, mixed_.end(), 0.0f);
  gossip_.run(protocols::Span<float>{mixed_.data(), mixed_.size()});
  // Zero whatever a neighbour mixed in: every member's tracker starts at zero.
  std::fill(mixed_.begin() + n, mixed_.end(), 0.0f);
  std::copy(mixed_.begin(), mixed_.begin() + n, model_.begin());
  std::fill(change_.begin(), change_.end(), 0.0f);
  tracking_ = true;
}

void GradientTrackingSync::track() {
  const std::size_t n = model_.size();
  float* x_prev = mixed_.data();
  float* y = mixed_.data() + n;
  float* x = model_.data();
  // 1. d = x̃ − x: the local steps' change.
  for (std::size_t i = 0; i < n; ++i) new_change_[i] = x_prev[i] - x[i];
  // 2. [x̃ | y] ← W [x̃ | y] over the view.
  gossip_.run(protocols::Span<float>{mixed_.data(), mixed_.size()});
  // 3. y ← W y + d − d̃;  x ← W x̃ − y;  x̃ ← x;  d̃ ← d.
  for (std::size_t i = 0; i < n; ++i) {
    y[i] += new_change_[i] - change_[i];
    x_prev[i] -= y[i];
    x[i] = x_prev[i];
  }
  change_.swap(new_change_);
}

std::vector<float> GradientTrackingSync::state() const {
  if (!tracking_) return {};
  std::vector<float> values(mixed_);
  values.insert(values.end(), change_.begin(), change_.end());
  return values;
}

bool GradientTrackingSync::restore(const std::vector<float>& values) {
  const std::size_t n = model_.size();
  if (values.size() != 3 * n) return false;
  std::copy(values.begin(), values.begin() + 2 * n, mixed_.begin());
  std::copy(values.begin() + 2 * n, values.end(), change_.begin());
  tracking_ = true;
  return true;
}

}  // namespace starling::gossip
