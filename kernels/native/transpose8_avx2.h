#pragma once
// 8×8 blocks of floats transposed in ymm registers, for the files compiled with AVX2
// (the GEMM's packing and its A·Bᵀ kernel): include it only there.
//
// Internal linkage on purpose, as in native/driver.h: code built with -mavx2 must never be
// merged by the linker with a build of the same name for another instruction set.
#include <immintrin.h>

namespace starling::kernels::native {
namespace {

/// Lane mask for the first `count` of 8 floats (all-ones lanes are loaded / stored).
inline __m256i lanes_for(int count) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), iota);
}

/// Row j of the result is column j of r: pairs of rows interleaved (ps, then pd), then the
/// 128-bit halves regrouped.
__attribute__((always_inline)) inline void transpose8(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    const __m256d a = _mm256_castps_pd(t[4 * i]), b = _mm256_castps_pd(t[4 * i + 1]);
    const __m256d c = _mm256_castps_pd(t[4 * i + 2]), d = _mm256_castps_pd(t[4 * i + 3]);
    r[4 * i + 0] = _mm256_castpd_ps(_mm256_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(b, d));
  }
  for (int q = 0; q < 4; ++q) {
    u[q] = _mm256_permute2f128_ps(r[q], r[4 + q], 0x20);
    u[4 + q] = _mm256_permute2f128_ps(r[q], r[4 + q], 0x31);
  }
  for (int q = 0; q < 8; ++q) r[q] = u[q];
}

}  // namespace
}  // namespace starling::kernels::native
