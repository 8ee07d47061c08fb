#pragma once
// Synchronous model averaging inside a node (Crossbow, Koliousis et al. VLDB 2019), as plain
// loops over flat arenas so it is testable without actors:
//   c_j = α (w_j − z),  w_j ← w_j − c_j,  z ← z + Σ_j c_j + μ (z − z_prev).
// The round is cut into slices that the learners apply in parallel.
#include <cstddef>

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

/// out = mean of `count` vectors, summed in index order (synchronous SGD, independent replicas).
void mean(const float* const* vectors, int count, float* out, std::size_t n);

/// ‖a − b‖ / ‖b‖ in double precision (0 when b is zero): how far averaging moved a model.
double relative_distance(const float* a, const float* b, std::size_t n);

}  // namespace starling::sma
