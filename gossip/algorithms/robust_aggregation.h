#pragma once
// Robust aggregation of a peer's model with its neighbours' (issue 33), for gossip rounds
// that would otherwise average: what replaces x_i ← x_i + Σ_j W_ij (x_j − x_i).
//   mean          that average (no defence).
//   clipped       self-centred clipping, ClippedGossip (He, Karimireddy, Jaggi 2022):
//                 x_i ← x_i + Σ_j W_ij · CLIP(x_j − x_i, τ_i), CLIP(v, τ) = v · min(1, τ/‖v‖);
//                 τ_i fixed, adaptive: the second-largest ‖x_j − x_i‖ among the neighbours
//                 of the round (the largest when there is one), or relative: such that the
//                 neighbours together move the peer at most κ times as far as its own
//                 training moved it since its last round, τ = κ·‖Δ_own‖ / Σ_j W_ij, a
//                 reference no neighbour can inflate (GossipAverage applies it).
//   trimmed-mean  coordinate-wise over {x_i} ∪ {x_j}: drop the `trim` smallest and largest
//                 values of each coordinate, average the rest (BRIDGE-T).
//   median        coordinate-wise median of {x_i} ∪ {x_j} (BRIDGE-M).
// A robust aggregate keeps no sum: the network's mean model moves, which is the price of
// not trusting it. Each call reports, per neighbour, its distance and whether it was clipped.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "protocols/span.h"

namespace starling::gossip {

enum class Aggregator { mean, clipped, trimmed_mean, median };
/// The config's name of each aggregator, indexed by Aggregator.
inline constexpr const char* kAggregatorNames[] = {"mean", "clipped", "trimmed-mean", "median"};
static_assert(std::size(kAggregatorNames) == static_cast<std::size_t>(Aggregator::median) + 1, "one name each");

bool parse_aggregator(const std::string& text, Aggregator& out);
const char* aggregator_name(Aggregator aggregator);

struct AggregatorSpec {
  Aggregator kind = Aggregator::mean;
  double clip_radius = 0.0;  // clipped: τ; 0 for adaptive
  int trim = 1;              // trimmed-mean: values dropped at each end of a coordinate
  double clip_relative = 0.0;  // clipped: κ of the relative radius when > 0 (then clip_radius is the round's)
};

/// What one round saw of one neighbour.
struct NeighbourSample {
  double distance = 0.0;  // ‖x_j − x_i‖ before mixing
  bool clipped = false;   // its difference was scaled down (clipped aggregator only)
};

/// What the rounds saw of one neighbour under a robust aggregator.
struct NeighbourStats {
  std::uint64_t rounds = 0, clipped = 0;
  double distance_sum = 0.0, distance_max = 0.0, distance_last = 0.0;
  void add(const NeighbourSample& s);
  void add(const NeighbourStats& other);  // another algorithm's count of the same neighbour
};

/// One neighbour's vector for the round and its mixing weight W_ij.
struct NeighbourVector {
  const float* values = nullptr;  // x.size() floats
  double weight = 0.0;
};

/// Mixes x with its neighbours by `spec` (not for Aggregator::mean, which GossipAverage and
/// AsyncGossip do themselves); returns one sample per neighbour, in order. A trim that would
/// leave nothing of the neighbours + 1 values is lowered to the median's; median and trimmed
/// mean ignore the weights.
std::vector<NeighbourSample> robust_mix(const AggregatorSpec& spec, protocols::Span<float> x,
                                        const std::vector<NeighbourVector>& neighbours);

/// The clipping radius of the round: spec.clip_radius, or adaptive from the distances.
double clip_radius(const AggregatorSpec& spec, const std::vector<double>& distances);

/// The distances ‖x_j − x_i‖ (vectorized; robust_kernels.h).
double distance(protocols::Span<const float> a, const float* b);

}  // namespace starling::gossip
