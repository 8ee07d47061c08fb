#pragma once
// The robust-aggregation loops (robust_kernels.h), written once and compiled into each ISA
// file with that file's flags. Every hot loop runs over a lane array of kLanes floats with no
// dependence between lanes, which GCC vectorizes at -O3 (-fopt-info-vec names each loop);
// internal linkage so that the builds for different ISAs are never merged by the linker.
#include <algorithm>
#include <cstring>
#include <vector>

#include "gossip/algorithms/robust_kernels.h"

namespace starling::gossip {
namespace {

constexpr std::size_t kLanes = 16;     // one AVX-512 register, two AVX2 ones
constexpr std::size_t kBlock = 1024;  // floats summed in float lanes before going to double

double squared_distance(const float* a, const float* b, std::size_t n) {
  double total = 0.0;
  for (std::size_t at = 0; at < n; at += kBlock) {
    const std::size_t m = std::min(kBlock, n - at);
    float acc[kLanes] = {};
    std::size_t i = 0;
    for (; i + kLanes <= m; i += kLanes)
      for (std::size_t l = 0; l < kLanes; ++l) {
        const float d = a[at + i + l] - b[at + i + l];
        acc[l] += d * d;
      }
    for (; i < m; ++i) {  // the ragged end
      const float d = a[at + i] - b[at + i];
      acc[i % kLanes] += d * d;
    }
    double block = 0.0;
    for (float v : acc) block += v;
    total += block;
  }
  return total;
}

void add_scaled_difference(float* x, const float* y, const float* base, float w, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += w * (y[i] - base[i]);
}

// Puts the smaller of lo[l], hi[l] in lo[l] and the larger in hi[l], for every lane: a min
// and a max instruction per register. Not inlined: inside the sort's loops GCC loses that
// lo and hi never overlap and falls back to scalar min/max.
[[gnu::noinline]] void compare_exchange(float* __restrict lo, float* __restrict hi) {
  for (std::size_t l = 0; l < kLanes; ++l) {
    const float a = lo[l], b = hi[l];
    lo[l] = std::min(a, b);
    hi[l] = std::max(a, b);
  }
}

// Sorts each of the kLanes columns of a count × kLanes tile: odd–even transposition sort,
// count passes of compare-exchanges between neighbouring rows, all lanes at once.
void sort_columns(float* tile, std::size_t count) {
  for (std::size_t pass = 0; pass < count; ++pass)
    for (std::size_t k = pass & 1; k + 1 < count; k += 2) compare_exchange(tile + k * kLanes, tile + (k + 1) * kLanes);
}

void trimmed_mean(const float* const* rows, std::size_t count, std::size_t trim, float* out, std::size_t n) {
  std::vector<float> tile(count * kLanes);
  const float kept = static_cast<float>(count - 2 * trim);
  for (std::size_t at = 0; at < n; at += kLanes) {
    const std::size_t m = std::min(kLanes, n - at);  // < kLanes only at the ragged end
    for (std::size_t k = 0; k < count; ++k) {
      float* row = tile.data() + k * kLanes;
      std::memcpy(row, rows[k] + at, m * sizeof(float));
      std::fill(row + m, row + kLanes, 0.0f);
    }
    sort_columns(tile.data(), count);
    float sum[kLanes] = {};
    for (std::size_t k = trim; k < count - trim; ++k)
      for (std::size_t l = 0; l < kLanes; ++l) sum[l] += tile[k * kLanes + l];
    for (std::size_t l = 0; l < m; ++l) out[at + l] = sum[l] / kept;
  }
}

constexpr RobustKernels kThisIsaKernels = {squared_distance, add_scaled_difference, trimmed_mean};

}  // namespace
}  // namespace starling::gossip
