#pragma once
// Synchronous model averaging inside a node (Crossbow, Koliousis et al. VLDB 2019), as plain
// loops over flat arenas so it is testable without actors:
//   c_j = α (w_j − z),  w_j ← w_j − c_j,  z ← z + Σ_j c_j + μ (z − z_prev).
// The round is cut into slices that the learners apply in parallel, in one of two forms:
// the node hands each learner its Slice (below), or the learners run the round among
// themselves (sma_group.h). Same arithmetic, same bits.
#include <cstddef>
#include <vector>

namespace starling::sma {

/// One slice [lo, hi) of an SMA round, fused into a single pass: for each replica j in index
/// order c_j = α (w_j − z) and w_j ← w_j − c_j; then z ← z + μ (z − z_prev) + Σ_j c_j and
/// z_prev ← the old z (with μ = 0, z_prev may be null and is untouched). Disjoint slices are
/// independent, so the learners of a node can run them in parallel, and the summation
/// order does not depend on which learner finished first.
void average_slice(float* z, float* z_prev, float* const* replicas, int count, float alpha, float momentum,
                   std::size_t lo, std::size_t hi);

/// Splits [0, n) into `parts` slices of 64-byte aligned starts; slice i is [bounds(i), bounds(i+1)).
std::size_t slice_bound(std::size_t n, int parts, int i);

/// α for a round of `learners` replicas: `alpha` when positive, else 1/learners.
float alpha_for(double alpha, int learners);

/// One learner's share of a round that the node runs: slice [lo, hi) of z, z_prev and every
/// replica, which nobody else touches until every share is done.
struct Slice {
  float* z = nullptr;
  float* z_prev = nullptr;
  std::vector<float*> replicas;
  float alpha = 0.f, momentum = 0.f;
  std::size_t lo = 0, hi = 0;
};

/// A round over z, z_prev (n floats each) and the replicas, cut into one share per replica.
std::vector<Slice> slices(float* z, float* z_prev, const std::vector<float*>& replicas, std::size_t n, float alpha,
                          float momentum);

/// Runs a share: average_slice on it.
void average(const Slice& share);

/// out = mean of `count` vectors, summed in index order (synchronous SGD, independent replicas).
void mean(const float* const* vectors, int count, float* out, std::size_t n);

/// ‖a − b‖ / ‖b‖ in double precision (0 when b is zero): how far averaging moved a model.
double relative_distance(const float* a, const float* b, std::size_t n);

}  // namespace starling::sma
