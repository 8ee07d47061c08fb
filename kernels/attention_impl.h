#pragma once
// The fused attention passes (attention.h), written once and compiled into each ISA's file
// with that file's vector type. Internal linkage on purpose, as in sequence_ops_impl.h: the
// builds must never be merged by the linker.
//
// Every product is C[rows × cols] = A·B with A read in place through a row and a depth
// stride (so Q, P and dS serve row-wise and P and dS column-wise, as Pᵀ and dSᵀ, without a
// copy) and B's rows contiguous vectors. The causal structure bounds each block of rows:
// queries [i0, i1) reach keys [0, i1), keys [j0, j1) are reached from queries [j0, t), and
// the zeros the softmax leaves beyond the diagonal make the rest of a block's depth exact.
#include "kernels/attention.h"
#include "kernels/sequence_ops.h"

#if defined(__AVX512F__)
#include "kernels/transpose16_avx512.h"
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include <algorithm>

namespace starling::kernels::attention_detail {

struct AttentionTable {
  void (*forward)(const AttentionHead&, float*, float*, float*) = nullptr;
  void (*backward)(const AttentionHead&, const float*, const float*, float*, float*, float*, float*,
                   float*) = nullptr;
};

/// Built with baseline flags (x86-64: SSE2; AArch64: NEON).
extern const AttentionTable kAttentionBaseline;
/// Built with -mavx2 -mfma.
extern const AttentionTable kAttentionAvx2;
/// Built with AVX-512 F/BW/DQ/VL.
extern const AttentionTable kAttentionAvx512;

namespace {

// This build's vector and the tile of accumulators it blocks into: kRows × kCols vectors
// take 12 of SSE2's and AVX2's 16 registers (3 rows of 4 vectors: a head of 32 floats is
// one AVX2 tile wide), 12 of AVX-512's 32 (6 rows of 2) and 24 of NEON's 32 (6 rows of 4).
#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kWidth = 16, kRows = 6, kCols = 2;
inline Vec splat(float x) { return _mm512_set1_ps(x); }
inline Vec load(const float* at) { return _mm512_loadu_ps(at); }
inline void store(float* at, Vec v) { _mm512_storeu_ps(at, v); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
#elif defined(__AVX2__) && defined(__FMA__)
using Vec = __m256;
constexpr int kWidth = 8, kRows = 3, kCols = 4;
inline Vec splat(float x) { return _mm256_set1_ps(x); }
inline Vec load(const float* at) { return _mm256_loadu_ps(at); }
inline void store(float* at, Vec v) { _mm256_storeu_ps(at, v); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
#elif defined(__x86_64__)
using Vec = __m128;
constexpr int kWidth = 4, kRows = 3, kCols = 4;
inline Vec splat(float x) { return _mm_set1_ps(x); }
inline Vec load(const float* at) { return _mm_loadu_ps(at); }
inline void store(float* at, Vec v) { _mm_storeu_ps(at, v); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
#elif defined(__ARM_NEON)
using Vec = float32x4_t;
constexpr int kWidth = 4, kRows = 6, kCols = 4;
inline Vec splat(float x) { return vdupq_n_f32(x); }
inline Vec load(const float* at) { return vld1q_f32(at); }
inline void store(float* at, Vec v) { vst1q_f32(at, v); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }
#else
#error "attention_impl.h: no vector type for this architecture"
#endif

// One product's operands: A(r, p) = a[r·a_rs + p·a_cs], B's row p at b + p·ldb, C's row r
// at c + r·ldc, and the depth p runs over.
struct Product {
  const float* a;
  long a_rs, a_cs;
  const float* b;
  long ldb;
  float* c;
  long ldc;
  int depth;
};

// Columns [j, j + V·kWidth) of R rows of C, overwritten.
template <int R, int V>
__attribute__((noinline)) void tile(const Product& m, int j) {
  const float* a = m.a;
  const float* b = m.b + j;
  const long a_rs = m.a_rs, a_cs = m.a_cs, ldb = m.ldb;
  Vec acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = splat(0.f);
  for (int p = 0; p < m.depth; ++p, a += a_cs, b += ldb) {
    Vec bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bv[v] = load(b + v * kWidth);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const Vec ar = splat(a[r * a_rs]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = fmadd(ar, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) store(m.c + r * m.ldc + j + v * kWidth, acc[r][v]);
}

// Columns [j, cols) of `rows` rows, narrower than a vector, one float at a time.
void edge(const Product& m, int rows, int j, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int col = j; col < cols; ++col) {
      float sum = 0.f;
      for (int p = 0; p < m.depth; ++p) sum += m.a[r * m.a_rs + p * m.a_cs] * m.b[p * m.ldb + col];
      m.c[r * m.ldc + col] = sum;
    }
}

// The last `vectors` (< kCols) vectors of R rows as one tile: as single vectors, each would
// rebroadcast A and keep only R accumulators in flight.
template <int R, int V = kCols - 1>
void narrow_tile(const Product& m, int j, int vectors) {
  if constexpr (V > 0) {
    if (vectors == V) return tile<R, V>(m, j);
    narrow_tile<R, V - 1>(m, j, vectors);
  }
}

// R rows of C, `cols` wide: whole tiles, then one narrower tile, then the edge.
template <int R>
void rows_of(const Product& m, int cols) {
  int j = 0;
  for (; j + kCols * kWidth <= cols; j += kCols * kWidth) tile<R, kCols>(m, j);
  const int vectors = (cols - j) / kWidth;
  narrow_tile<R>(m, j, vectors);
  j += vectors * kWidth;
  if (j < cols) edge(m, R, j, cols);
}

// `rows` ≤ kRows rows of C.
template <int R = kRows>
void product(int rows, int cols, const Product& m) {
  if constexpr (R > 1) {
    if (rows < R) return product<R - 1>(rows, cols, m);
  }
  rows_of<R>(m, cols);
}

// The columns a block of score rows ending at query i1 computes: keys [0, i1), rounded up to
// whole vectors where the rows have room (the extra entries lie beyond the diagonal, which
// the softmax passes neither read nor keep).
int score_columns(int i1, int t) { return std::min((i1 + kWidth - 1) / kWidth * kWidth, t); }

// dst (d rows of t) ← the first d columns of t rows `ld` apart, transposed, 16 × 16 floats
// at a time: column by column over all t rows, the rows' lines (a [q | k | v] row apart,
// into few L1 sets) were evicted before their next column was read, a miss a float.
void transpose(const float* src, long ld, int t, int d, float* dst) {
#if defined(__AVX512F__)
  transpose_blocks(t, d, src, ld, dst, t);
#else
  constexpr int kBlock = 16;
  for (int r0 = 0; r0 < t; r0 += kBlock)
    for (int c0 = 0; c0 < d; c0 += kBlock) {
      const int r1 = std::min(t, r0 + kBlock), c1 = std::min(d, c0 + kBlock);
      for (int c = c0; c < c1; ++c)
        for (int r = r0; r < r1; ++r) dst[static_cast<long>(c) * t + r] = src[r * ld + c];
    }
#endif
}

// dst (t rows of d, contiguous) ← the first d columns of t rows `ld` apart. A head's V rows
// lie a whole [q | k | v] row apart (1.5 KiB in the GPT), so as P·V's B they fall into a
// few L1 sets and evict one another between row blocks; contiguous, they stay. (The
// backward's products read theirs in place: a copy there measured no faster.)
void gather(const float* src, long ld, int t, int d, float* dst) {
  for (int r = 0; r < t; ++r) std::copy_n(src + r * ld, d, dst + static_cast<long>(r) * d);
}

// Rows [0, t) of the scores S = A·Xᵀ (A = Q or dO, rows lda apart; xt = Xᵀ, d rows of t)
// into s (row stride t), each block of rows for the keys it reaches.
void causal_scores(int t, int d, const float* a, long lda, const float* xt, float* s) {
  for (int i0 = 0; i0 < t; i0 += kRows) {
    const int i1 = std::min(i0 + kRows, t);
    product(i1 - i0, score_columns(i1, t), {a + i0 * lda, lda, 1, xt, t, s + static_cast<long>(i0) * t, t, d});
  }
}

// Rows of out (ld_out apart) = W·X for W = P or dS (t × t, zero beyond the diagonal) and X's
// t rows lx apart: query rows [i0, i1) over keys [0, i1).
void weighted_rows(const AttentionHead& h, const float* w, const float* x, long lx, float* out, long ld_out) {
  for (int i0 = 0; i0 < h.t; i0 += kRows) {
    const int i1 = std::min(i0 + kRows, h.t);
    product(i1 - i0, h.d, {w + static_cast<long>(i0) * h.t, h.t, 1, x, lx, out + i0 * ld_out, ld_out, i1});
  }
}

// Rows of out (ld apart) = Wᵀ·Y for W = P or dS and Y's t rows ly apart: key rows [j0, j1)
// over the queries that reach them, [j0, t).
void transposed_rows(const AttentionHead& h, const float* w, const float* y, long ly, float* out) {
  const long t = h.t;
  for (int j0 = 0; j0 < h.t; j0 += kRows) {
    const int j1 = std::min(j0 + kRows, h.t);
    product(j1 - j0, h.d, {w + j0 * t + j0, 1, t, y + j0 * ly, ly, out + j0 * h.ld, h.ld, h.t - j0});
  }
}

void forward(const AttentionHead& h, float* p, float* out, float* scratch) {
  transpose(h.k, h.ld, h.t, h.d, scratch);
  causal_scores(h.t, h.d, h.q, h.ld, scratch, p);
  causal_softmax_forward(1, h.t, h.scale, p);
  gather(h.v, h.ld, h.t, h.d, scratch);
  weighted_rows(h, p, scratch, h.d, out, h.ld_out);
}

void backward(const AttentionHead& h, const float* p, const float* d_out, float* dq, float* dk, float* dv, float* ds,
              float* scratch) {
  transposed_rows(h, p, d_out, h.ld_out, dv);  // dV = Pᵀ·dO
  transpose(h.v, h.ld, h.t, h.d, scratch);
  causal_scores(h.t, h.d, d_out, h.ld_out, scratch, ds);  // dP = dO·Vᵀ
  causal_softmax_backward(1, h.t, h.scale, p, ds);
  weighted_rows(h, ds, h.k, h.ld, dq, h.ld);  // dQ = dS·K
  transposed_rows(h, ds, h.q, h.ld, dk);  // dK = dSᵀ·Q
}

constexpr AttentionTable make_attention_table() {
  AttentionTable t;
  t.forward = &forward;
  t.backward = &backward;
  return t;
}

}  // namespace
}  // namespace starling::kernels::attention_detail
