#pragma once
// 16×16 blocks of floats transposed in zmm registers, for the files compiled with AVX-512
// (the GEMM's packing, the ops' transpose): include it only there.
//
// Internal linkage on purpose, as in native/driver.h: AVX-512 code must never be merged by
// the linker with a build of the same name for another instruction set.
#include <immintrin.h>

#include <algorithm>

namespace starling::kernels {
namespace {

/// The lanes of a vector that `count` valid floats fill (all for 16 or more, none for 0 or less).
inline __mmask16 lanes_for(int count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

/// Row j of the result is column j of r. Pairs of rows interleaved (ps, then pd), then
/// 128-bit lanes regrouped twice. Row 4L + q of the result comes from lane L of the four
/// 4-row groups' vector q. maskz forms with full masks: the plain ones make GCC 12 warn.
inline void transpose16(__m512 (&r)[16]) {
  constexpr __mmask16 all = 0xFFFF;
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(all, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(all, r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i + 0] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, a, c));
    u[4 * i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, a, c));
    u[4 * i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, b, d));
    u[4 * i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, b, d));
  }
  for (int q = 0; q < 4; ++q) {
    const __m512 v0 = _mm512_maskz_shuffle_f32x4(all, u[q], u[4 + q], 0x44);
    const __m512 v1 = _mm512_maskz_shuffle_f32x4(all, u[8 + q], u[12 + q], 0x44);
    const __m512 v2 = _mm512_maskz_shuffle_f32x4(all, u[q], u[4 + q], 0xEE);
    const __m512 v3 = _mm512_maskz_shuffle_f32x4(all, u[8 + q], u[12 + q], 0xEE);
    r[q] = _mm512_maskz_shuffle_f32x4(all, v0, v1, 0x88);
    r[4 + q] = _mm512_maskz_shuffle_f32x4(all, v0, v1, 0xDD);
    r[8 + q] = _mm512_maskz_shuffle_f32x4(all, v2, v3, 0x88);
    r[12 + q] = _mm512_maskz_shuffle_f32x4(all, v2, v3, 0xDD);
  }
}

/// dst[j*ldd + i] = src[i*lds + j] for i < rows, j < cols, 16×16 blocks at a time through
/// registers. Only a block's ragged edge is masked: a masked store costs several plain ones.
inline void transpose_blocks(int rows, int cols, const float* src, long lds, float* dst, long ldd) {
  for (int i0 = 0; i0 < rows; i0 += 16) {
    const int down = std::min(16, rows - i0);
    const __mmask16 down_lanes = lanes_for(down);
    for (int j0 = 0; j0 < cols; j0 += 16) {
      const int across = std::min(16, cols - j0);
      const __mmask16 across_lanes = lanes_for(across);
      __m512 r[16];
      for (int i = 0; i < 16; ++i)
        r[i] = i < down ? _mm512_maskz_loadu_ps(across_lanes, src + (i0 + i) * lds + j0) : _mm512_setzero_ps();
      transpose16(r);
      for (int j = 0; j < across; ++j) {
        float* at = dst + (j0 + j) * ldd + i0;
        if (down == 16) _mm512_storeu_ps(at, r[j]);
        else _mm512_mask_storeu_ps(at, down_lanes, r[j]);
      }
    }
  }
}

}  // namespace
}  // namespace starling::kernels
