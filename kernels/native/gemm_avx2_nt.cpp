// AVX2 GEMM for C = A·Bᵀ with up to 8 rows (the input gradient dY·Wᵀ at batch ≤ 8),
// computed as Cᵀ = B·Aᵀ: Aᵀ (k × 8, zero past m) is packed once per call and is the vector
// operand, while B's rows (contiguous along k) are broadcast in place, so B is never
// transposed; the blocked kernel would transpose all of B into panels, as many copies as
// the product has multiply-adds per row of C at m = 8. Each 8×8 accumulator tile is
// transposed in registers on the way out, so C, the bias and the ReLU mask stay row-major.
// Compiled with -mavx2 -mfma for this file only.
#include "kernels/native/isa_gemm.h"
#include "kernels/native/pack_buffer.h"
#include "kernels/native/transpose8_avx2.h"

#include <immintrin.h>

#include <algorithm>

namespace starling::kernels::native {
namespace {

constexpr int kLanes = 8;  // rows of C per vector, and rows of B (columns of C) per tile

// Aᵀ into `at`: row p holds A[0..m)[p], then zeros up to 8.
void pack_at(const GemmArgs& g, float* at) {
  std::fill(at, at + static_cast<long>(kLanes) * g.k, 0.f);
  for (int i = 0; i < g.m; ++i) {
    const float* a = g.a + static_cast<long>(i) * g.lda;
    for (int p = 0; p < g.k; ++p) at[static_cast<long>(p) * kLanes + i] = a[p];
  }
}

// Row i of C at columns [j0, j0 + 8), `cols` of them valid: old C, bias, ReLU and mask,
// then the store. max(v, 0) maps NaN to 0 like the reference epilogue.
__attribute__((always_inline)) inline void finish_row(const GemmArgs& g, __m256 v, int i, int j0, __m256i cols) {
  const __m256 zero = _mm256_setzero_ps();
  float* c = g.c + static_cast<long>(i) * g.ldc + j0;
  if (g.accumulate) v = _mm256_add_ps(v, _mm256_maskload_ps(c, cols));
  if (g.bias) v = _mm256_add_ps(v, _mm256_maskload_ps(g.bias + j0, cols));
  if (g.relu) v = _mm256_max_ps(v, zero);
  if (g.relu_mask) {
    const __m256 m = _mm256_maskload_ps(g.relu_mask + static_cast<long>(i) * g.ldmask + j0, cols);
    v = _mm256_and_ps(v, _mm256_cmp_ps(m, zero, _CMP_GT_OQ));
  }
  _mm256_maskstore_ps(c, cols, v);
}

// Columns [j0, j0 + 8) of C from the 8 rows of B at `b`, `ldb` apart (one base pointer:
// eight would not fit the general registers beside the loop's own). `at` is padded, so the
// loop needs no lane masks.
__attribute__((noinline)) void tile(const GemmArgs& g, const float* at, const float* b, long ldb, int j0) {
  __m256 acc[kLanes];
#pragma GCC unroll 8
  for (int r = 0; r < kLanes; ++r) acc[r] = _mm256_setzero_ps();
  const float* a = at;
  const int k = g.k;
#pragma GCC unroll 2
  for (int p = 0; p < k; ++p, a += kLanes, ++b) {
    const __m256 av = _mm256_loadu_ps(a);
#pragma GCC unroll 8
    for (int r = 0; r < kLanes; ++r) acc[r] = _mm256_fmadd_ps(av, _mm256_broadcast_ss(b + r * ldb), acc[r]);
  }
  // A second array for the transpose: GCC keeps an array that is transposed in place in
  // memory, storing every accumulator on every step of the loop above.
  __m256 rows[kLanes];
#pragma GCC unroll 8
  for (int r = 0; r < kLanes; ++r) rows[r] = acc[r];
  transpose8(rows);  // rows[i]: row i of C, lane r = column j0 + r
  const __m256i lanes = lanes_for(std::min(kLanes, g.n - j0));
  for (int i = 0; i < g.m; ++i) finish_row(g, rows[i], i, j0, lanes);
}

}  // namespace

void gemm_avx2_nt(const GemmArgs& g) {
  float* at = pack_buffer(PackSlot::a, static_cast<std::size_t>(kLanes) * g.k);
  pack_at(g, at);
  const int whole = g.n / kLanes * kLanes;
  for (int j0 = 0; j0 < whole; j0 += kLanes) tile(g, at, g.b + static_cast<long>(j0) * g.ldb, g.ldb, j0);
  if (whole == g.n) return;
  // The last columns' rows of B copied with zero rows after them, so the tile has no tail.
  float* rest = pack_buffer(PackSlot::b, static_cast<std::size_t>(kLanes) * g.k);
  std::fill(rest, rest + static_cast<long>(kLanes) * g.k, 0.f);
  for (int j = whole; j < g.n; ++j)
    std::copy(g.b + static_cast<long>(j) * g.ldb, g.b + static_cast<long>(j) * g.ldb + g.k, rest + static_cast<long>(j - whole) * g.k);
  tile(g, at, rest, g.k, whole);
}

}  // namespace starling::kernels::native
