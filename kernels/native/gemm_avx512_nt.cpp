// AVX-512 GEMM for C = A·Bᵀ with up to 64 rows (the input gradient dY·Wᵀ at training batch
// sizes), computed as Cᵀ = B·Aᵀ: Aᵀ is small (k × m), so it is packed once per call and its
// rows are the vector operand, while B's rows (contiguous along k) are broadcast in place
// with no transpose of B at all. Each 8(n)×16·NV(m) accumulator tile is transposed in
// registers on the way out so C, the bias and the ReLU mask stay row-major.
// Against the dot-product kernel this has no horizontal reductions (one per 16 FMAs there
// at k = 128). Correct for any k; gemm_native.cpp routes it k ≥ 16.
// Compiled with -mavx512f/bw/dq/vl -mfma for this file only.
#include "kernels/native/isa_gemm.h"
#include "kernels/native/pack_buffer.h"

#include <immintrin.h>

#include <algorithm>

namespace starling::kernels::native {
namespace {

constexpr int kRows = 8;  // rows of B (columns of C) per tile: one ymm per output row of C

// Aᵀ into `at`: row p holds A[0..m)[p], then zeros up to the padded width `mp` so kernels
// load full vectors past m without reading A out of bounds.
void pack_at(const GemmArgs& g, int mp, float* at) {
  for (int p = 0; p < g.k; ++p) std::fill(at + static_cast<long>(p) * mp + g.m, at + static_cast<long>(p + 1) * mp, 0.f);
  // Row i of A is contiguous along p: read it once, write a column of `at`.
  for (int i = 0; i < g.m; ++i) {
    const float* a = g.a + static_cast<long>(i) * g.lda;
    for (int p = 0; p < g.k; ++p) at[static_cast<long>(p) * mp + i] = a[p];
  }
}

// The epilogue of one call, read once per tile into locals instead of once per stored row.
struct Epilogue {
  float* c;
  long ldc;
  const float* bias;  // null: none
  const float* mask;  // null: none
  long ldmask;
  bool accumulate, relu;

  Epilogue(const GemmArgs& g, int j0)
      : c(g.c + j0), ldc(g.ldc), bias(g.bias ? g.bias + j0 : nullptr), mask(g.relu_mask ? g.relu_mask + j0 : nullptr),
        ldmask(g.ldmask), accumulate(g.accumulate), relu(g.relu) {}
};

// Old C, bias, ReLU and mask for the `cols` lanes of row i, then the store; EPILOGUE false:
// the call asks for none of them.
template <bool EPILOGUE>
__attribute__((always_inline)) inline void finish_row(const Epilogue& e, __m256 v, int i, __mmask8 cols) {
  const __m256 zero = _mm256_setzero_ps();
  float* c = e.c + i * e.ldc;
  if constexpr (!EPILOGUE) return _mm256_mask_storeu_ps(c, cols, v);
  if (e.accumulate) v = _mm256_add_ps(v, _mm256_maskz_loadu_ps(cols, c));
  if (e.bias) v = _mm256_add_ps(v, _mm256_maskz_loadu_ps(cols, e.bias));
  if (e.relu) v = _mm256_maskz_mov_ps(_mm256_cmp_ps_mask(v, zero, _CMP_GT_OQ), v);
  if (e.mask) {
    const __m256 m = _mm256_maskz_loadu_ps(cols, e.mask + i * e.ldmask);
    v = _mm256_maskz_mov_ps(_mm256_cmp_ps_mask(m, zero, _CMP_GT_OQ), v);
  }
  _mm256_mask_storeu_ps(c, cols, v);
}

// Halves of a vector. Masked extracts with a full mask: GCC 12's plain extract and cast
// intrinsics pass an undefined source and warn about it.
__attribute__((always_inline)) inline __m256 low_half(__m512 v) { return _mm512_maskz_extractf32x8_ps(0xFF, v, 0); }
__attribute__((always_inline)) inline __m256 high_half(__m512 v) { return _mm512_maskz_extractf32x8_ps(0xFF, v, 1); }

// Transposes 8 accumulators r[0..8) (lane l = row i0+l of C) into 16 rows of 8 columns and
// finishes the first `rows` of them. Two unpack stages build 4-row groups per 128-bit lane;
// one two-source permute per output pair then joins rows 0–3 and 4–7 of a column. The maskz
// forms with a full mask are the same instructions; the plain ones make GCC 12 warn.
template <bool EPILOGUE>
__attribute__((always_inline)) inline void store_transposed(const Epilogue& e, const __m512 (&r)[kRows], int i0,
                                                            int rows, __mmask8 cols) {
  constexpr __mmask16 all = 0xFFFF;
  __m512 t[8], u[8];
  for (int h = 0; h < 2; ++h) {
    const int b = 4 * h;
    t[b + 0] = _mm512_maskz_unpacklo_ps(all, r[b + 0], r[b + 1]);
    t[b + 1] = _mm512_maskz_unpackhi_ps(all, r[b + 0], r[b + 1]);
    t[b + 2] = _mm512_maskz_unpacklo_ps(all, r[b + 2], r[b + 3]);
    t[b + 3] = _mm512_maskz_unpackhi_ps(all, r[b + 2], r[b + 3]);
    const __m512d t0 = _mm512_castps_pd(t[b + 0]), t1 = _mm512_castps_pd(t[b + 1]);
    const __m512d t2 = _mm512_castps_pd(t[b + 2]), t3 = _mm512_castps_pd(t[b + 3]);
    // u[b + q], 128-bit lane L: accumulators r = b..b+3 at lane 4L + q, i.e. row 4L + q of C.
    u[b + 0] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, t0, t2));
    u[b + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, t0, t2));
    u[b + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, t1, t3));
    u[b + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, t1, t3));
  }
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i hi = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m512 p01 = _mm512_permutex2var_ps(u[q], lo, u[4 + q]);  // output rows q, 4 + q
    const __m512 p23 = _mm512_permutex2var_ps(u[q], hi, u[4 + q]);  // output rows 8 + q, 12 + q
    if (q < rows) finish_row<EPILOGUE>(e, low_half(p01), i0 + q, cols);
    if (4 + q < rows) finish_row<EPILOGUE>(e, high_half(p01), i0 + 4 + q, cols);
    if (8 + q < rows) finish_row<EPILOGUE>(e, low_half(p23), i0 + 8 + q, cols);
    if (12 + q < rows) finish_row<EPILOGUE>(e, high_half(p23), i0 + 12 + q, cols);
  }
}

// Columns [j0, j0+8) × rows [i0, i0 + 16·NV) of C. Rows of B past n repeat the last valid one
// (never stored), so the inner loop has no tail; `at` is padded, so no lane masks either.
template <int NV, bool EPILOGUE>
__attribute__((noinline)) void tile(const GemmArgs& g, const float* at, int mp, int i0, int j0) {
  __m512 acc[NV][kRows];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) acc[v][r] = _mm512_setzero_ps();
  const int cols = std::min(kRows, g.n - j0);
  const float* b[kRows];
  for (int r = 0; r < kRows; ++r) b[r] = g.b + static_cast<long>(j0 + std::min(r, cols - 1)) * g.ldb;
  const float* a = at + i0;
#pragma GCC unroll 2
  for (int p = 0; p < g.k; ++p, a += mp) {
    __m512 av[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) av[v] = _mm512_loadu_ps(a + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512 bv = _mm512_set1_ps(b[r][p]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[v][r] = _mm512_fmadd_ps(av[v], bv, acc[v][r]);
    }
  }
  const __mmask8 col_mask = static_cast<__mmask8>((1u << cols) - 1);
  const Epilogue e(g, j0);
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const int rows = std::min(16, g.m - i0 - 16 * v);
    if (rows >= 16) store_transposed<EPILOGUE>(e, acc[v], i0 + 16 * v, 16, col_mask);
    else if (rows > 0) store_transposed<EPILOGUE>(e, acc[v], i0 + 16 * v, rows, col_mask);
  }
}

// Up to 8 rows of C: the same tile with 8-lane vectors, which keep both FMA pipes of a core
// that splits 512-bit operations (Zen 4) as busy as full-width ones, where 16 lanes would
// idle half of every FMA. Even and odd p go to separate accumulators: 8 chains alone only
// just cover two pipes × 4 cycles of FMA latency, so any stall leaves a pipe idle.
__attribute__((noinline)) void tile_narrow(const GemmArgs& g, const float* at, int mp, int i0, int j0) {
  __m256 even[kRows], odd[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) even[r] = odd[r] = _mm256_setzero_ps();
  const int cols = std::min(kRows, g.n - j0);
  const float* b[kRows];
  for (int r = 0; r < kRows; ++r) b[r] = g.b + static_cast<long>(j0 + std::min(r, cols - 1)) * g.ldb;
  const float* a = at + i0;
  int p = 0;
  for (; p + 2 <= g.k; p += 2, a += 2 * mp) {
    const __m256 a0 = _mm256_loadu_ps(a), a1 = _mm256_loadu_ps(a + mp);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      even[r] = _mm256_fmadd_ps(a0, _mm256_set1_ps(b[r][p]), even[r]);
      odd[r] = _mm256_fmadd_ps(a1, _mm256_set1_ps(b[r][p + 1]), odd[r]);
    }
  }
  if (p < g.k) {
    const __m256 a0 = _mm256_loadu_ps(a);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) even[r] = _mm256_fmadd_ps(a0, _mm256_set1_ps(b[r][p]), even[r]);
  }
  __m512 wide[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
    wide[r] = _mm512_insertf32x8(_mm512_setzero_ps(), _mm256_add_ps(even[r], odd[r]), 0);
  store_transposed<true>(Epilogue(g, j0), wide, i0, std::min(8, g.m - i0), static_cast<__mmask8>((1u << cols) - 1));
}

}  // namespace

void gemm_avx512_nt(const GemmArgs& g) {
  const int mp = (g.m + 15) / 16 * 16;
  float* at = pack_buffer(PackSlot::a, static_cast<std::size_t>(mp) * g.k);
  pack_at(g, mp, at);
  const bool plain = !g.accumulate && !g.bias && !g.relu && !g.relu_mask;
  // Row blocks of 32 outside: their k×32 slice of Aᵀ stays in L1 while B's rows stream by.
  for (int i0 = 0; i0 < g.m; i0 += 32) {
    const int rows = g.m - i0;
    for (int j0 = 0; j0 < g.n; j0 += kRows) {
      if (rows > 16) plain ? tile<2, false>(g, at, mp, i0, j0) : tile<2, true>(g, at, mp, i0, j0);
      else if (rows > 8) plain ? tile<1, false>(g, at, mp, i0, j0) : tile<1, true>(g, at, mp, i0, j0);
      else tile_narrow(g, at, mp, i0, j0);
    }
  }
}

}  // namespace starling::kernels::native
