#pragma once
// Bandwidth-adaptive compression (the Determined AI note in the seeds): steers the density
// of a sparsifying codec (topk density, threshold target) so that communication hides
// behind computation. Pure logic, no sockets or clocks: the caller measures each round's
// compute and communication seconds, feeds them in, and uses the density it gets back for
// the next round.
//
// Rule, evaluated on the means over a window of the last `interval` rounds, once that
// window is full. A change empties the window, so changes are at least `interval` rounds
// apart and each is judged only by rounds that ran at the density it set:
//   target = compute · (1 − margin)
//   comm > target              → tighten: density × max(0.5, target / comm)
//   comm < relax_below · target → relax:   density × min(2, target / comm)
// A tightening after which communication does not fall by 10 % is undone, and the density
// never goes below that point again (the link is latency-bound: fewer bytes buy nothing).
// A tightening after which communication does not fall by 10 % is undone, and the density
// never goes below that point again (a latency-bound link: fewer bytes buy nothing).
// The result is clamped to [min_density, max_density]. Communication time is taken to
// scale with density, so one adjustment aims straight at the target, limited to 2× either
// way because latency does not shrink with density.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace starling::gossip {

struct AdaptiveCompressionOptions {
  double initial_density = 0.01;
  double min_density = 1e-4;
  double max_density = 1.0;
  double margin = 0.1;       // keep communication this fraction below compute
  double relax_below = 0.5;  // relax only when comm is under this fraction of the target
  std::size_t interval = 20;  // rounds between adjustments (at least 1)
};

/// What observe() decided for the next round.
struct DensityDecision {
  double density = 0.0;
  bool changed = false;
  std::string report;  // a log line when changed, empty otherwise
};

class AdaptiveCompression {
 public:
  /// InvalidArgument for densities outside (0, 1], min above max, margin outside [0, 1),
  /// relax_below outside (0, 1], or a zero interval. The initial density is clamped.
  explicit AdaptiveCompression(AdaptiveCompressionOptions options = {});

  /// Records one round's measurement and returns the density for the next round.
  /// Negative or non-finite times are ignored (counted in ignored()).
  DensityDecision observe(double compute_seconds, double comm_seconds);

  double density() const { return density_; }
  std::uint64_t rounds() const { return rounds_; }
  std::uint64_t adjustments() const { return adjustments_; }
  std::uint64_t ignored() const { return ignored_; }

 private:
  DensityDecision decide();
  DensityDecision change_to(double density, const char* why, double compute, double comm);

  AdaptiveCompressionOptions options_;
  double density_;
  std::vector<double> compute_;  // the window since the last adjustment
  std::vector<double> comm_;
  std::uint64_t rounds_ = 0;
  std::uint64_t adjustments_ = 0;
  std::uint64_t ignored_ = 0;
  // Undoing a tightening that did not pay: the density floor it left, and what to compare.
  double floor_ = 0.0;
  bool tightened_ = false;
  double comm_before_ = 0.0, last_factor_ = 1.0;
};

}  // namespace starling::gossip
