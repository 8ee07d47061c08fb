// Robust aggregation (gossip/algorithms/robust_aggregation.h) over the vector loops of
// robust_kernels.h.
#include "gossip/algorithms/robust_aggregation.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "gossip/algorithms/robust_kernels.h"
#include "gossip/transport/error.h"

namespace starling::gossip {

bool parse_aggregator(const std::string& text, Aggregator& out) {
  for (std::size_t i = 0; i < std::size(kAggregatorNames); ++i)
    if (text == kAggregatorNames[i]) {
      out = static_cast<Aggregator>(i);
      return true;
    }
  return false;
}

const char* aggregator_name(Aggregator aggregator) { return kAggregatorNames[static_cast<int>(aggregator)]; }

void NeighbourStats::add(const NeighbourSample& s) {
  ++rounds;
  clipped += s.clipped ? 1 : 0;
  distance_sum += s.distance;
  distance_max = std::max(distance_max, s.distance);
  distance_last = s.distance;
}

void NeighbourStats::add(const NeighbourStats& other) {
  rounds += other.rounds;
  clipped += other.clipped;
  distance_sum += other.distance_sum;
  distance_max = std::max(distance_max, other.distance_max);
  if (other.rounds > 0) distance_last = other.distance_last;
}

double distance(protocols::Span<const float> a, const float* b) {
  return std::sqrt(robust_kernels().squared_distance(a.data(), b, a.size()));
}

double clip_radius(const AggregatorSpec& spec, const std::vector<double>& distances) {
  if (spec.clip_radius > 0.0 || distances.empty()) return spec.clip_radius;
  std::vector<double> sorted = distances;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  return sorted[std::min<std::size_t>(1, sorted.size() - 1)];
}

namespace {

// x_i ← x_i + Σ_j W_ij · min(1, τ/‖x_j − x_i‖) · (x_j − x_i), every difference from x_i as
// it was before mixing.
std::vector<NeighbourSample> clipped_mix(const AggregatorSpec& spec, protocols::Span<float> x,
                                         const std::vector<NeighbourVector>& neighbours) {
  const RobustKernels& k = robust_kernels();
  const std::vector<float> own(x.begin(), x.end());
  std::vector<NeighbourSample> samples(neighbours.size());
  std::vector<double> distances;
  for (const NeighbourVector& n : neighbours) distances.push_back(distance(own, n.values));
  const double tau = clip_radius(spec, distances);
  for (std::size_t j = 0; j < neighbours.size(); ++j) {
    const double d = distances[j];
    const double scale = d > tau ? tau / d : 1.0;
    samples[j] = {d, d > tau};
    k.add_scaled_difference(x.data(), neighbours[j].values, own.data(),
                            static_cast<float>(neighbours[j].weight * scale), x.size());
  }
  return samples;
}

std::vector<NeighbourSample> coordinate_mix(std::size_t trim, protocols::Span<float> x,
                                            const std::vector<NeighbourVector>& neighbours) {
  std::vector<NeighbourSample> samples;
  std::vector<const float*> rows{x.data()};
  for (const NeighbourVector& n : neighbours) {
    samples.push_back({distance(x, n.values), false});
    rows.push_back(n.values);
  }
  // The config keeps 2·trim below the neighbour count; a view that lost neighbours to deaths
  // trims at most down to the median rather than stopping the peer.
  trim = std::min(trim, (rows.size() - 1) / 2);
  robust_kernels().trimmed_mean(rows.data(), rows.size(), trim, x.data(), x.size());
  return samples;
}

}  // namespace

std::vector<NeighbourSample> robust_mix(const AggregatorSpec& spec, protocols::Span<float> x,
                                        const std::vector<NeighbourVector>& neighbours) {
  switch (spec.kind) {
    case Aggregator::clipped: return clipped_mix(spec, x, neighbours);
    case Aggregator::trimmed_mean: return coordinate_mix(static_cast<std::size_t>(spec.trim), x, neighbours);
    case Aggregator::median: return coordinate_mix(neighbours.size() / 2, x, neighbours);  // of neighbours + 1 values
    case Aggregator::mean: break;
  }
  STARLING_GOSSIP_THROW(InvalidArgument, "robust_mix: the mean is GossipAverage's own");
}

}  // namespace starling::gossip
