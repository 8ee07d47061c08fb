#include "learners/sma.h"

#include <algorithm>

namespace starling::sma {

void correct(float* __restrict w, const float* __restrict z, float* __restrict c, float alpha, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    c[i] = alpha * (w[i] - z[i]);
    w[i] -= c[i];
  }
}

void apply(float* z, float* z_prev, const float* const* corrections, int count, float momentum, std::size_t n) {
  // Blocks small enough that z and every correction stay in L1 while they are summed.
  constexpr std::size_t kBlock = 1024;
  for (std::size_t lo = 0; lo < n; lo += kBlock) {
    const std::size_t hi = std::min(n, lo + kBlock);
    if (z_prev && momentum != 0.f) {
      for (std::size_t i = lo; i < hi; ++i) {
        const float old = z[i];
        z[i] += momentum * (old - z_prev[i]);
        z_prev[i] = old;
      }
    }
    for (int j = 0; j < count; ++j) {
      const float* c = corrections[j];
      for (std::size_t i = lo; i < hi; ++i) z[i] += c[i];
    }
  }
}

void mean(const float* const* vectors, int count, float* out, std::size_t n) {
  std::copy(vectors[0], vectors[0] + n, out);
  for (int j = 1; j < count; ++j)
    for (std::size_t i = 0; i < n; ++i) out[i] += vectors[j][i];
  const float scale = 1.f / static_cast<float>(count);
  for (std::size_t i = 0; i < n; ++i) out[i] *= scale;
}

}  // namespace starling::sma
