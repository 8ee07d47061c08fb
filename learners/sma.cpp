#include "learners/sma.h"

#include <algorithm>

namespace starling::sma {

void correct(float* w, const float* z, float* c, float alpha, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    c[i] = alpha * (w[i] - z[i]);
    w[i] -= c[i];
  }
}

void apply(float* z, float* z_prev, const float* const* corrections, int count, float momentum, float* scratch,
           std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) scratch[i] = z[i] + momentum * (z[i] - z_prev[i]);
  for (int j = 0; j < count; ++j) {
    const float* c = corrections[j];
    for (std::size_t i = 0; i < n; ++i) scratch[i] += c[i];
  }
  std::copy(z, z + n, z_prev);
  std::copy(scratch, scratch + n, z);
}

void mean(const float* const* vectors, int count, float* out, std::size_t n) {
  std::copy(vectors[0], vectors[0] + n, out);
  for (int j = 1; j < count; ++j)
    for (std::size_t i = 0; i < n; ++i) out[i] += vectors[j][i];
  const float scale = 1.f / static_cast<float>(count);
  for (std::size_t i = 0; i < n; ++i) out[i] *= scale;
}

}  // namespace starling::sma
