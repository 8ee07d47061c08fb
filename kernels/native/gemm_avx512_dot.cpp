// AVX-512 dot-product GEMM for C = A·Bᵀ with few rows (the input gradient dY·Wᵀ at small
// batch). Packing a transposed B costs a k×n gather for only a handful of rows of output;
// here both A rows and Bᵀ rows are contiguous along k, so a 4×4 tile keeps 16 vector
// accumulators over k and reduces them, four at a time, into C's rows at the end.
// Compiled with -mavx512f/bw/dq/vl -mfma for this file only.
#include "kernels/native/isa_gemm.h"

#include <immintrin.h>

namespace starling::kernels::native {
namespace {

constexpr int kRows = 4;
constexpr int kCols = 4;

// The lane partial sums of four vectors, per 128-bit lane: lane L of the result holds
// {Σw, Σx, Σy, Σz} over lane L of each. reduce4 is this and a fold of the four lanes.
__attribute__((always_inline)) inline __m512 lane_sums4(__m512 w, __m512 x, __m512 y, __m512 z) {
  constexpr __mmask16 all = 0xFFFF;
  const __m512 wx = _mm512_add_ps(_mm512_maskz_unpacklo_ps(all, w, x), _mm512_maskz_unpackhi_ps(all, w, x));
  const __m512 yz = _mm512_add_ps(_mm512_maskz_unpacklo_ps(all, y, z), _mm512_maskz_unpackhi_ps(all, y, z));
  const __m512d wxd = _mm512_castps_pd(wx), yzd = _mm512_castps_pd(yz);
  return _mm512_add_ps(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, wxd, yzd)),
                       _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, wxd, yzd)));
}

// Four rows' lane partial sums (lane_sums4) folded at once: lane r of the result is row r's
// four column sums. A 4×4 transpose of 128-bit lanes with adds, instead of folding each
// row's lanes alone (9 operations instead of 16).
__attribute__((always_inline)) inline __m512 fold_rows4(__m512 r0, __m512 r1, __m512 r2, __m512 r3) {
  constexpr __mmask16 all = 0xFFFF;
  const __m512 s01 = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(all, r0, r1, 0x44), _mm512_maskz_shuffle_f32x4(all, r0, r1, 0xEE));
  const __m512 s23 = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(all, r2, r3, 0x44), _mm512_maskz_shuffle_f32x4(all, r2, r3, 0xEE));
  return _mm512_add_ps(_mm512_maskz_shuffle_f32x4(all, s01, s23, 0x88), _mm512_maskz_shuffle_f32x4(all, s01, s23, 0xDD));
}

// Lane sums of four vectors as one 4-float vector {Σw, Σx, Σy, Σz}: pairwise unpacks fold
// inside each 128-bit lane (lane_sums4), then the four lanes are folded together; about a
// third of the shuffles of four separate horizontal sums.
__attribute__((always_inline)) inline __m128 reduce4(__m512 w, __m512 x, __m512 y, __m512 z) {
  constexpr __mmask16 all = 0xFFFF;
  __m512 v = lane_sums4(w, x, y, z);
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(all, v, v, 0x4E));
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(all, v, v, 0xB1));
  return _mm512_maskz_extractf32x4_ps(0xF, v, 0);
}

// Old C, bias, ReLU and mask on the `lanes` of four consecutive elements of row i from j.
__attribute__((always_inline)) inline void store(__m128 v, const GemmArgs& g, int i, int j,
                                                 __mmask8 lanes) {
  const __m128 zero = _mm_setzero_ps();
  float* c = g.c + static_cast<long>(i) * g.ldc + j;
  if (g.accumulate) v = _mm_add_ps(v, _mm_maskz_loadu_ps(lanes, c));
  if (g.bias) v = _mm_add_ps(v, _mm_maskz_loadu_ps(lanes, g.bias + j));
  if (g.relu) v = _mm_maskz_mov_ps(_mm_cmp_ps_mask(v, zero, _CMP_GT_OQ), v);
  if (g.relu_mask) {
    const __m128 m = _mm_maskz_loadu_ps(lanes, g.relu_mask + static_cast<long>(i) * g.ldmask + j);
    v = _mm_maskz_mov_ps(_mm_cmp_ps_mask(m, zero, _CMP_GT_OQ), v);
  }
  _mm_mask_storeu_ps(c, lanes, v);
}

// One R×C tile at rows i0, columns j0: 16 lanes of k per step, the tail masked. Every loop
// over acc is fully unrolled: one runtime index would pin acc to memory.
template <int R, int C>
__attribute__((always_inline)) inline void tile_body(const GemmArgs& g, int i0, int j0) {
  __m512 acc[R][kCols];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_setzero_ps();
  const float* a[R];
  const float* b[C];
  for (int r = 0; r < R; ++r) a[r] = g.a + static_cast<long>(i0 + r) * g.lda;
  for (int c = 0; c < C; ++c) b[c] = g.b + static_cast<long>(j0 + c) * g.ldb;
  // 16 lanes of k a step; the tail's step masked.
  auto step = [&](int p, __mmask16 lanes) __attribute__((always_inline)) {
    __m512 av[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) av[r] = _mm512_maskz_loadu_ps(lanes, a[r] + p);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m512 bv = _mm512_maskz_loadu_ps(lanes, b[c] + p);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r][c] = _mm512_fmadd_ps(av[r], bv, acc[r][c]);
    }
  };
  const int whole = g.k / 16 * 16;
  int p = 0;
#pragma GCC unroll 2
  for (; p < whole; p += 16) step(p, 0xFFFF);
  if (p < g.k) step(p, static_cast<__mmask16>((1u << (g.k - p)) - 1));
  // Columns past C stay zero and are masked off the store.
  constexpr __mmask8 lanes = static_cast<__mmask8>((1u << C) - 1);
  if constexpr (R == kRows) {
    const __m512 sums = fold_rows4(lane_sums4(acc[0][0], acc[0][1], acc[0][2], acc[0][3]),
                                   lane_sums4(acc[1][0], acc[1][1], acc[1][2], acc[1][3]),
                                   lane_sums4(acc[2][0], acc[2][1], acc[2][2], acc[2][3]),
                                   lane_sums4(acc[3][0], acc[3][1], acc[3][2], acc[3][3]));
    store(_mm512_maskz_extractf32x4_ps(0xF, sums, 0), g, i0, j0, lanes);
    store(_mm512_maskz_extractf32x4_ps(0xF, sums, 1), g, i0 + 1, j0, lanes);
    store(_mm512_maskz_extractf32x4_ps(0xF, sums, 2), g, i0 + 2, j0, lanes);
    store(_mm512_maskz_extractf32x4_ps(0xF, sums, 3), g, i0 + 3, j0, lanes);
  } else {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      store(reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]), g, i0 + r, j0, lanes);
  }
}

template <int R, int C>
__attribute__((noinline)) void tile(const GemmArgs& g, int i0, int j0) {
  tile_body<R, C>(g, i0, j0);
}

// The whole 4×4 tiles of a column block, `rows` a multiple of 4, in one call.
__attribute__((noinline)) void whole_tiles(const GemmArgs& g, int rows, int j0) {
  for (int i0 = 0; i0 < rows; i0 += kRows) tile_body<kRows, kCols>(g, i0, j0);
}

template <int R, int C>
void pick_cols(const GemmArgs& g, int i0, int j0, int cols) {
  if constexpr (C > 1) {
    if (cols < C) return pick_cols<R, C - 1>(g, i0, j0, cols);
  }
  tile<R, C>(g, i0, j0);
}

template <int R>
void pick_rows(const GemmArgs& g, int i0, int j0, int rows, int cols) {
  if constexpr (R > 1) {
    if (rows < R) return pick_rows<R - 1>(g, i0, j0, rows, cols);
  }
  pick_cols<R, kCols>(g, i0, j0, cols);
}

}  // namespace

void gemm_avx512_dot(const GemmArgs& g) {
  // Column tiles outside: a 4×k sliver of Bᵀ stays in L1 while every row block of A (small
  // by construction) streams past it from L2.
  const int whole_rows = g.m / kRows * kRows;
  for (int j0 = 0; j0 < g.n; j0 += kCols) {
    int i0 = 0;
    if (g.n - j0 >= kCols) whole_tiles(g, whole_rows, j0), i0 = whole_rows;
    for (; i0 < g.m; i0 += kRows) pick_rows<kRows>(g, i0, j0, g.m - i0, g.n - j0);
  }
}

}  // namespace starling::kernels::native
