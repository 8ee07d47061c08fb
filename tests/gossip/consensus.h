#pragma once
// Consensus measures over the peers' vectors, shared by the gossip test suites.
#include <algorithm>
#include <cmath>
#include <vector>

namespace starling::gossip::testing {

inline std::vector<double> mean_of(const std::vector<std::vector<float>>& xs) {
  std::vector<double> mean(xs.front().size(), 0.0);
  for (const auto& x : xs)
    for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += x[i] / static_cast<double>(xs.size());
  return mean;
}

/// √Σ_peers ‖x − mean‖²: zero when every peer holds the average.
inline double consensus_distance(const std::vector<std::vector<float>>& xs) {
  const std::vector<double> mean = mean_of(xs);
  double sq = 0.0;
  for (const auto& x : xs)
    for (std::size_t i = 0; i < mean.size(); ++i) sq += (x[i] - mean[i]) * (x[i] - mean[i]);
  return std::sqrt(sq);
}

/// How far the average moved: gossip must preserve it.
inline double max_mean_shift(const std::vector<std::vector<float>>& before, const std::vector<std::vector<float>>& after) {
  const std::vector<double> a = mean_of(before), b = mean_of(after);
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

}  // namespace starling::gossip::testing
