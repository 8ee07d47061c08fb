#pragma once
// Synchronous model averaging inside a node (Crossbow, Koliousis et al. VLDB 2019), as plain
// loops over flat arenas so it is testable without actors:
//   c_j = α (w_j − z),  w_j ← w_j − c_j,  z ← z + Σ_j c_j + μ (z − z_prev).
#include <cstddef>

namespace starling::sma {

/// Learner side: writes c = α (w − z) and moves the replica: w ← w − c. No two may alias.
void correct(float* w, const float* z, float* c, float alpha, std::size_t n);

/// Node side, in place and in one pass: z ← z + μ (z − z_prev) + Σ_j c_j and z_prev ← old z,
/// summing the corrections in index order so the result does not depend on which learner
/// finished first. With μ = 0, z_prev may be null and is neither read nor written.
void apply(float* z, float* z_prev, const float* const* corrections, int count, float momentum, std::size_t n);

/// out = mean of `count` vectors, summed in index order (synchronous SGD, independent replicas).
void mean(const float* const* vectors, int count, float* out, std::size_t n);

}  // namespace starling::sma
