#include "learners/replicas/sma.h"

#include "kernels/ops.h"

#include <algorithm>
#include <cmath>

namespace starling::sma {

void average_slice(float* z, float* z_prev, float* const* replicas, int count, float alpha, float momentum,
                   std::size_t lo, std::size_t hi) {
  // Blocks small enough that z, the sum and every replica's block stay in L1.
  constexpr std::size_t kBlock = 512;
  float sum[kBlock];
  for (std::size_t b = lo; b < hi; b += kBlock) {
    const long len = static_cast<long>(std::min(kBlock, hi - b));
    for (int j = 0; j < count; ++j) kernels::sma_correct(len, z + b, replicas[j] + b, sum, alpha, j > 0);
    if (count == 0) std::fill(sum, sum + len, 0.f);
    kernels::sma_center(len, z + b, z_prev && momentum != 0.f ? z_prev + b : nullptr, sum, momentum);
  }
}

std::size_t slice_bound(std::size_t n, int parts, int i) {
  if (i >= parts) return n;
  const std::size_t step = (n / static_cast<std::size_t>(parts) + 15) / 16 * 16;
  return std::min(n, step * static_cast<std::size_t>(i));
}

float alpha_for(double alpha, int learners) { return static_cast<float>(alpha > 0 ? alpha : 1.0 / learners); }

std::vector<Slice> slices(float* z, float* z_prev, const std::vector<float*>& replicas, std::size_t n, float alpha,
                          float momentum) {
  const int k = static_cast<int>(replicas.size());
  std::vector<Slice> out(replicas.size(), Slice{z, z_prev, replicas, alpha, momentum, 0, 0});
  for (int j = 0; j < k; ++j) out[j].lo = slice_bound(n, k, j), out[j].hi = slice_bound(n, k, j + 1);
  return out;
}

void average(const Slice& share) {
  average_slice(share.z, share.z_prev, share.replicas.data(), static_cast<int>(share.replicas.size()), share.alpha,
                share.momentum, share.lo, share.hi);
}

void mean(const float* const* vectors, int count, float* out, std::size_t n) {
  std::copy(vectors[0], vectors[0] + n, out);
  for (int j = 1; j < count; ++j)
    for (std::size_t i = 0; i < n; ++i) out[i] += vectors[j][i];
  const float scale = 1.f / static_cast<float>(count);
  for (std::size_t i = 0; i < n; ++i) out[i] *= scale;
}

double relative_distance(const float* a, const float* b, std::size_t n) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : 0.0;
}

}  // namespace starling::sma
