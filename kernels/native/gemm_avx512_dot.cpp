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

// Lane sums of four vectors as one 4-float vector {Σw, Σx, Σy, Σz}: pairwise unpacks
// fold inside each 128-bit lane, then the four lanes are folded together; about a third of
// the shuffles of four separate horizontal sums. The maskz forms with a full mask are the
// same instructions; the plain ones make GCC 12 warn about their undefined source.
__attribute__((always_inline)) inline __m128 reduce4(__m512 w, __m512 x, __m512 y, __m512 z) {
  constexpr __mmask16 all = 0xFFFF;
  const __m512 wx = _mm512_add_ps(_mm512_maskz_unpacklo_ps(all, w, x), _mm512_maskz_unpackhi_ps(all, w, x));
  const __m512 yz = _mm512_add_ps(_mm512_maskz_unpacklo_ps(all, y, z), _mm512_maskz_unpackhi_ps(all, y, z));
  const __m512d wxd = _mm512_castps_pd(wx), yzd = _mm512_castps_pd(yz);
  __m512 v = _mm512_add_ps(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, wxd, yzd)),
                           _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, wxd, yzd)));
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
__attribute__((noinline)) void tile(const GemmArgs& g, int i0, int j0) {
  __m512 acc[R][kCols];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_setzero_ps();
  const float* a[R];
  const float* b[C];
  for (int r = 0; r < R; ++r) a[r] = g.a + static_cast<long>(i0 + r) * g.lda;
  for (int c = 0; c < C; ++c) b[c] = g.b + static_cast<long>(j0 + c) * g.ldb;
  // One loop with a per-step lane mask (all ones until the tail).
  for (int p = 0; p < g.k; p += 16) {
    const int left = g.k - p;
    const __mmask16 lanes = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    __m512 av[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) av[r] = _mm512_maskz_loadu_ps(lanes, a[r] + p);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m512 bv = _mm512_maskz_loadu_ps(lanes, b[c] + p);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r][c] = _mm512_fmadd_ps(av[r], bv, acc[r][c]);
    }
  }
  // Columns past C stay zero and are masked off the store.
  constexpr __mmask8 lanes = static_cast<__mmask8>((1u << C) - 1);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
    store(reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]), g, i0 + r, j0, lanes);
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
  for (int j0 = 0; j0 < g.n; j0 += kCols)
    for (int i0 = 0; i0 < g.m; i0 += kRows)
      pick_rows<kRows>(g, i0, j0, g.m - i0, g.n - j0);
}

}  // namespace starling::kernels::native
