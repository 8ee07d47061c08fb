// Bandwidth-adaptive compression controller (gossip/algorithms/adaptive_compression.h).
#include "gossip/algorithms/adaptive_compression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "gossip/transport/error.h"

namespace starling::gossip {

namespace {

bool valid_density(double d) { return d > 0.0 && d <= 1.0; }

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

AdaptiveCompression::AdaptiveCompression(AdaptiveCompressionOptions options) : options_(options) {
  if (!valid_density(options_.min_density) || !valid_density(options_.max_density))
    STARLING_GOSSIP_THROW(InvalidArgument, "density bounds must lie in (0, 1]");
  if (options_.min_density > options_.max_density)
    STARLING_GOSSIP_THROW(InvalidArgument, "min_density above max_density");
  if (!(options_.margin >= 0.0 && options_.margin < 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "margin must lie in [0, 1)");
  if (!(options_.relax_below > 0.0 && options_.relax_below <= 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "relax_below must lie in (0, 1]");
  if (options_.interval == 0) STARLING_GOSSIP_THROW(InvalidArgument, "interval must be at least 1");
  if (!std::isfinite(options_.initial_density))
    STARLING_GOSSIP_THROW(InvalidArgument, "initial_density must be finite");
  density_ = std::clamp(options_.initial_density, options_.min_density, options_.max_density);
}

DensityDecision AdaptiveCompression::observe(double compute_seconds, double comm_seconds) {
  if (!std::isfinite(compute_seconds) || !std::isfinite(comm_seconds) || compute_seconds < 0.0 ||
      comm_seconds < 0.0) {
    ++ignored_;
    return {density_, false, {}};
  }
  ++rounds_;
  compute_.push_back(compute_seconds);
  comm_.push_back(comm_seconds);
  // A sliding window: once full, every round may trigger the (rate-limited) adjustment.
  if (compute_.size() > options_.interval) {
    compute_.erase(compute_.begin());
    comm_.erase(comm_.begin());
  }
  if (compute_.size() < options_.interval) return {density_, false, {}};
  return decide();
}

DensityDecision AdaptiveCompression::decide() {
  const double compute = mean(compute_), comm = mean(comm_);
  const double target = compute * (1.0 - options_.margin);
  // The last tightening bought less than 10 % of communication time: the link is bound by
  // latency, not bytes, so sending less only loses accuracy. Go back and tighten no further.
  if (tightened_ && comm > 0.9 * comm_before_) {
    floor_ = density_ / last_factor_;
    tightened_ = false;
    return change_to(floor_, "undo (latency-bound)", compute, comm);
  }
  tightened_ = false;
  if (comm > target && density_ > floor_) {
    // comm > target ≥ 0, so the ratio is finite; zero compute tightens by the full 2×.
    const double factor = std::max(0.5, target / comm);
    DensityDecision d = change_to(std::max(floor_, density_ * factor), "tighten", compute, comm);
    if (d.changed) tightened_ = true, comm_before_ = comm, last_factor_ = factor;
    return d;
  }
  if (comm < options_.relax_below * target) {
    const double factor = comm > 0.0 ? std::min(2.0, target / comm) : 2.0;
    return change_to(density_ * factor, "relax", compute, comm);
  }
  return {density_, false, {}};
}

DensityDecision AdaptiveCompression::change_to(double density, const char* why, double compute, double comm) {
  const double next = std::clamp(density, options_.min_density, options_.max_density);
  if (next == density_) return {density_, false, {}};  // pinned at a clamp: nothing to report
  char line[200];
  std::snprintf(line, sizeof line, "%s compression: density %.3g -> %.3g (compute %.3g s, comm %.3g s per round)",
                why, density_, next, compute, comm);
  density_ = next;
  ++adjustments_;
  compute_.clear();
  comm_.clear();
  return {density_, true, line};
}

}  // namespace starling::gossip
