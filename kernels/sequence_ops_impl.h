#pragma once
// Bodies of the sequence kernels (sequence_ops.h), written once as plain loops the compiler
// vectorizes and compiled into each ISA file with that file's flags, as ops_impl.h.
// Reductions keep kLanes partial results side by side, so that they vectorize without
// reassociating one sum, and fold them with SSE intrinsics (in every x86-64 build; NEON on
// AArch64); rows are short
// (a head's scores, a token's channels, a vocabulary), so each takes a few passes over data
// in L1 rather than one fused loop.
//
// Internal linkage on purpose, as in ops_impl.h.
#include "kernels/sequence_ops.h"
#include "kernels/vector_math.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#else
#error "sequence_ops_impl.h: no vector folds for this architecture"
#endif

#include <cmath>
#include <cstdint>
#include <limits>

namespace starling::kernels::sequence_detail {

struct SequenceTable {
  void (*gelu_forward)(long, const float*, float*, float*) = nullptr;
  void (*gelu_backward)(long, const float*, const float*, float*) = nullptr;
  void (*causal_softmax_forward)(long, int, float, float*) = nullptr;
  void (*causal_softmax_backward)(long, int, float, const float*, float*) = nullptr;
  void (*layernorm_forward)(long, int, const float*, const float*, const float*, float*, float*, float*) = nullptr;
  void (*layernorm_backward)(long, int, const float*, const float*, const float*, const float*, const float*, float*,
                             float*, float*) = nullptr;
  double (*vocab_cross_entropy)(long, int, const float*, const int32_t*, float*) = nullptr;
};

/// Built with baseline flags (x86-64: SSE2; AArch64: NEON).
extern const SequenceTable kSequenceBaseline;
/// Built with -mavx2 -mfma.
extern const SequenceTable kSequenceAvx2;
/// Built with AVX-512 F/BW/DQ/VL.
extern const SequenceTable kSequenceAvx512;

namespace {

namespace vm = vector_math;
constexpr int kLanes = 16;

// No __restrict on x and y: they may be one array.
inline void gelu_forward(long n, const float* x, float* y, float* __restrict slope) {
  if (!slope) {
    for (long i = 0; i < n; ++i) y[i] = x[i] * vm::normal(x[i]).cdf;
    return;
  }
  for (long i = 0; i < n; ++i) {
    const float v = x[i];
    const vm::Normal f = vm::normal(v);
    slope[i] = f.cdf + v * f.pdf;
    y[i] = v * f.cdf;
  }
}

inline void gelu_backward(long n, const float* x, const float* dy, float* dx) {
  for (long i = 0; i < n; ++i) {
    const float v = x[i];
    const vm::Normal f = vm::normal(v);
    dx[i] = dy[i] * (f.cdf + v * f.pdf);
  }
}

#if defined(__x86_64__)
// Four SSE vectors folded into one float: a loop over 16 lanes one after another would be a
// chain of 16 dependent scalar operations a row.
inline float fold(__m128 v, __m128 (*op)(__m128, __m128)) {
  v = op(v, _mm_movehl_ps(v, v));
  return _mm_cvtss_f32(op(v, _mm_shuffle_ps(v, v, 1)));
}
inline float lanes_sum(const float (&lane)[kLanes]) {
  const __m128 low = _mm_add_ps(_mm_loadu_ps(lane), _mm_loadu_ps(lane + 4));
  return fold(_mm_add_ps(low, _mm_add_ps(_mm_loadu_ps(lane + 8), _mm_loadu_ps(lane + 12))), _mm_add_ps);
}

// The select loop of a scalar maximum is not vectorized (GCC keeps 16 scalar maxima), so the
// lanes are four SSE vectors; max_ps(x, m) is x > m ? x : m, which skips a NaN as the tail does.
inline float row_max(const float* __restrict x, int n) {
  __m128 m[4];
  for (__m128& v : m) v = _mm_set1_ps(-std::numeric_limits<float>::infinity());
  int j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int v = 0; v < 4; ++v) m[v] = _mm_max_ps(_mm_loadu_ps(x + j + 4 * v), m[v]);
  float top = -std::numeric_limits<float>::infinity();
  for (; j < n; ++j) top = x[j] > top ? x[j] : top;
  const float lanes = fold(_mm_max_ps(_mm_max_ps(m[0], m[1]), _mm_max_ps(m[2], m[3])), _mm_max_ps);
  return lanes > top ? lanes : top;
}
#else
// The same folds in NEON: four vectors added pairwise, then across one.
inline float lanes_sum(const float (&lane)[kLanes]) {
  const float32x4_t low = vaddq_f32(vld1q_f32(lane), vld1q_f32(lane + 4));
  return vaddvq_f32(vaddq_f32(low, vaddq_f32(vld1q_f32(lane + 8), vld1q_f32(lane + 12))));
}

// maxnm returns the number where one operand is NaN, so a NaN is skipped as the tail does.
inline float row_max(const float* __restrict x, int n) {
  float32x4_t m[4];
  for (float32x4_t& v : m) v = vdupq_n_f32(-std::numeric_limits<float>::infinity());
  int j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int v = 0; v < 4; ++v) m[v] = vmaxnmq_f32(vld1q_f32(x + j + 4 * v), m[v]);
  float top = -std::numeric_limits<float>::infinity();
  for (; j < n; ++j) top = x[j] > top ? x[j] : top;
  const float lanes = vmaxnmvq_f32(vmaxnmq_f32(vmaxnmq_f32(m[0], m[1]), vmaxnmq_f32(m[2], m[3])));
  return lanes > top ? lanes : top;
}
#endif

// Σ a_j·b_j, or Σ a_j when b is null.
inline float row_sum(const float* __restrict a, const float* __restrict b, int n) {
  float lane[kLanes] = {};
  int j = 0;
  if (b) {
    for (; j + kLanes <= n; j += kLanes)
      for (int l = 0; l < kLanes; ++l) lane[l] += a[j + l] * b[j + l];
  } else {
    for (; j + kLanes <= n; j += kLanes)
      for (int l = 0; l < kLanes; ++l) lane[l] += a[j + l];
  }
  float sum = 0.f;
  for (; j < n; ++j) sum += b ? a[j] * b[j] : a[j];
  return sum + lanes_sum(lane);
}

// x_j ← e^(scale·(x_j − shift)) over n floats.
inline void exp_shifted(float* __restrict x, int n, float scale, float shift) {
  for (int j = 0; j < n; ++j) x[j] = vm::exp(scale * (x[j] - shift));
}

inline void scale_row(float* __restrict x, int n, float by) {
  for (int j = 0; j < n; ++j) x[j] *= by;
}

inline void zero_row(float* __restrict x, int n) {
  for (int j = 0; j < n; ++j) x[j] = 0.f;
}

// A row's causal length n rounded up to whole lanes, where the row has room: the kernels run
// over that many entries, so that no pass ends in a scalar tail, and the entries past n
// contribute nothing (−∞ scores in the forward, zero probabilities in the backward).
inline int lane_length(int n, int t) {
  const int whole = (n + kLanes - 1) / kLanes * kLanes;
  return whole < t ? whole : t;
}

inline void causal_softmax_forward(long count, int t, float scale, float* s) {
  for (long m = 0; m < count; ++m)
    for (int i = 0; i < t; ++i) {
      float* row = s + (m * t + i) * t;
      const int n = i + 1, w = lane_length(n, t);
      for (int j = n; j < w; ++j) row[j] = -std::numeric_limits<float>::infinity();  // e^-87 at most: below rounding
      exp_shifted(row, w, scale, row_max(row, w));
      scale_row(row, n, 1.f / row_sum(row, nullptr, w));
      zero_row(row + n, t - n);
    }
}

inline void softmax_row_backward(const float* __restrict p, float* __restrict d, int n, float scale) {
  const float dot = row_sum(p, d, n);
  for (int j = 0; j < n; ++j) d[j] = scale * p[j] * (d[j] - dot);
}

// The forward left P zero past each row's causal length, and dP is zeroed there first (it
// may hold anything), so the lanes past it give zeros.
inline void causal_softmax_backward(long count, int t, float scale, const float* p, float* d) {
  for (long m = 0; m < count; ++m)
    for (int i = 0; i < t; ++i) {
      const long at = (m * t + i) * t;
      zero_row(d + at + i + 1, t - i - 1);
      softmax_row_backward(p + at, d + at, lane_length(i + 1, t), scale);
    }
}

// Two-pass statistics (the mean, then squared deviations from it), as norm_impl.h.
inline void layernorm_row(int c, const float* __restrict x, const float* __restrict gamma,
                          const float* __restrict beta, float* __restrict y, float* mean, float* rstd) {
  const float mu = row_sum(x, nullptr, c) / static_cast<float>(c);
  float lane[kLanes] = {};
  int j = 0;
  for (; j + kLanes <= c; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += (x[j + l] - mu) * (x[j + l] - mu);
  float var = 0.f;
  for (; j < c; ++j) var += (x[j] - mu) * (x[j] - mu);
  var += lanes_sum(lane);
  const float r = 1.f / std::sqrt(var / static_cast<float>(c) + kLayerNormEpsilon);
  for (j = 0; j < c; ++j) y[j] = (x[j] - mu) * r * gamma[j] + beta[j];
  *mean = mu, *rstd = r;
}

inline void layernorm_forward(long rows, int c, const float* x, const float* gamma, const float* beta, float* y,
                              float* mean, float* rstd) {
  for (long i = 0; i < rows; ++i) layernorm_row(c, x + i * c, gamma, beta, y + i * c, mean + i, rstd + i);
}

// Σ a_j·(b_j − shift).
inline float centered_dot(const float* __restrict a, const float* __restrict b, float shift, int n) {
  float lane[kLanes] = {};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += a[j + l] * (b[j + l] - shift);
  float sum = 0.f;
  for (; j < n; ++j) sum += a[j] * (b[j] - shift);
  return sum + lanes_sum(lane);
}

// One row's share of dgamma and dbeta.
inline void layernorm_row_parameter_gradient(int c, const float* __restrict x, const float* __restrict dy, float mu,
                                             float r, float* __restrict dgamma, float* __restrict dbeta) {
  for (int j = 0; j < c; ++j) {
    dgamma[j] += dy[j] * ((x[j] - mu) * r);
    dbeta[j] += dy[j];
  }
}

// One row's dx, which holds g = gamma·dy meanwhile (one simple loop per pass: a loop that
// sums two things at once vectorizes badly).
inline void layernorm_row_input_gradient(int c, const float* __restrict x, const float* __restrict dy,
                                         const float* __restrict gamma, float mu, float r, float* __restrict dx) {
  for (int j = 0; j < c; ++j) dx[j] = gamma[j] * dy[j];
  const float a = row_sum(dx, nullptr, c) / static_cast<float>(c);
  const float b = centered_dot(dx, x, mu, c) * r / static_cast<float>(c);
  for (int j = 0; j < c; ++j) dx[j] = r * (dx[j] - a - (x[j] - mu) * r * b);
}

inline void layernorm_backward(long rows, int c, const float* x, const float* dy, const float* gamma,
                               const float* mean, const float* rstd, float* dgamma, float* dbeta, float* dx) {
  zero_row(dgamma, c);
  zero_row(dbeta, c);
  for (long i = 0; i < rows; ++i) {
    layernorm_row_parameter_gradient(c, x + i * c, dy + i * c, mean[i], rstd[i], dgamma, dbeta);
    if (dx) layernorm_row_input_gradient(c, x + i * c, dy + i * c, gamma, mean[i], rstd[i], dx + i * c);
  }
}

// Σ_j e^(z_j − top) over a row, through a block on the stack when no gradient is kept.
inline float exp_sum(const float* __restrict z, int n, float top) {
  constexpr int kBlock = 64;
  float block[kBlock];
  float sum = 0.f;
  for (int j0 = 0; j0 < n; j0 += kBlock) {
    const int len = n - j0 < kBlock ? n - j0 : kBlock;
    for (int j = 0; j < len; ++j) block[j] = vm::exp(z[j0 + j] - top);
    sum += row_sum(block, nullptr, len);
  }
  return sum;
}

// The row's exponentials are kept in d meanwhile, so that the gradient divides them rather
// than taking them again.
inline double vocab_cross_entropy(long rows, int vocab, const float* logits, const int32_t* targets, float* dlogits) {
  double total = 0.0;
  const float inv_rows = 1.f / static_cast<float>(rows);
  for (long i = 0; i < rows; ++i) {
    const float* z = logits + i * vocab;
    const int target = targets[i] >= 0 && targets[i] < vocab ? targets[i] : 0;
    const float top = row_max(z, vocab);
    float sum;
    if (dlogits) {
      float* d = dlogits + i * vocab;
      for (int j = 0; j < vocab; ++j) d[j] = vm::exp(z[j] - top);
      sum = row_sum(d, nullptr, vocab);
      scale_row(d, vocab, inv_rows / sum);
      d[target] -= inv_rows;
    } else {
      sum = exp_sum(z, vocab, top);
    }
    total += std::log(static_cast<double>(sum)) - (static_cast<double>(z[target]) - top);
  }
  return total / static_cast<double>(rows);
}

constexpr SequenceTable make_sequence_table() {
  SequenceTable t;
  t.gelu_forward = &gelu_forward;
  t.gelu_backward = &gelu_backward;
  t.causal_softmax_forward = &causal_softmax_forward;
  t.causal_softmax_backward = &causal_softmax_backward;
  t.layernorm_forward = &layernorm_forward;
  t.layernorm_backward = &layernorm_backward;
  t.vocab_cross_entropy = &vocab_cross_entropy;
  return t;
}

}  // namespace
}  // namespace starling::kernels::sequence_detail
