// Causal self-attention on the GEMM and the vectorized causal softmax (learners/layers/causal_attention.h).
#include "learners/layers/causal_attention.h"

#include "kernels/attention.h"
#include "kernels/sequence_ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace starling {
namespace {

// C[m×n] (+)= op(A)·op(B) with row strides, on the configured backend.
void product(kernels::Backend backend, int m, int n, int k, const float* a, int lda, bool trans_a, const float* b, int ldb,
             bool trans_b, float* c, int ldc, bool accumulate) {
  kernels::GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = a, g.lda = lda, g.trans_a = trans_a;
  g.b = b, g.ldb = ldb, g.trans_b = trans_b;
  g.c = c, g.ldc = ldc;
  g.accumulate = accumulate;
  kernels::gemm(backend, g);
}

}  // namespace

CausalAttention::CausalAttention(int context, int width, int heads)
    : context_(context), width_(width), heads_(heads), head_(heads > 0 ? width / heads : 0) {
  if (context < 1 || width < 1 || heads < 1 || width % heads != 0)
    throw std::invalid_argument("attention: " + std::to_string(heads) + " heads do not divide the width " +
                                std::to_string(width));
  scale_ = 1.f / std::sqrt(static_cast<float>(head_));
}

std::string CausalAttention::name() const {
  return "causal_attention(" + std::to_string(heads_) + " heads of " + std::to_string(head_) + ")";
}

void CausalAttention::reserve(int batch) {
  p_.reserve(static_cast<std::size_t>(batch) * heads_ * context_ * context_);
  ds_.reserve(static_cast<std::size_t>(context_) * context_);
  transposed_.reserve(static_cast<std::size_t>(head_) * context_);
}

kernels::AttentionHead CausalAttention::head_of(const float* qkv, int h) const {
  kernels::AttentionHead head;
  head.t = context_, head.d = head_, head.scale = scale_;
  head.q = qkv + h * head_, head.k = head.q + width_, head.v = head.q + 2 * width_;
  head.ld = 3 * width_, head.ld_out = width_;
  return head;
}

// The causal products skip the zero upper triangle in two blocks of rows split at the
// middle (from 32 tokens: below, a product's fixed cost outweighs the quarter it saves).
// A block of rows [r0, r1) needs keys [0, r1) only; a block of keys [c0, c1) is reached only
// from queries [c0, t).
std::vector<int> CausalAttention::blocks() const {
  if (context_ < 32) return {0, context_};
  return {0, context_ / 2, context_};
}

void CausalAttention::forward(kernels::Backend backend, int batch, const float* x, float* y) {
  reserve(batch);
  if (backend != kernels::Backend::native) return gemm_forward(backend, batch, x, y);
  const long t = context_, row = 3 * width_;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads_; ++h)
      kernels::attention_forward(head_of(x + b * t * row, h), probabilities(b, h), y + b * t * width_ + h * head_,
                                 transposed_.data());
}

void CausalAttention::backward(kernels::Backend backend, int batch, const float* x, const float*, const float* dy,
                               float* dx) {
  if (!dx) return;
  if (backend != kernels::Backend::native) return gemm_backward(backend, batch, x, dy, dx);
  const long t = context_, row = 3 * width_;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads_; ++h) {
      float* dq = dx + b * t * row + h * head_;
      kernels::attention_backward(head_of(x + b * t * row, h), probabilities(b, h), dy + b * t * width_ + h * head_, dq,
                                  dq + width_, dq + 2 * width_, ds_.data(), transposed_.data());
    }
}

void CausalAttention::gemm_forward(kernels::Backend backend, int batch, const float* x, float* y) {
  const int t = context_, row = 3 * width_;
  const std::vector<int> edges = blocks();
  for (int b = 0; b < batch; ++b) {
    const float* qkv = x + static_cast<long>(b) * t * row;
    float* out = y + static_cast<long>(b) * t * width_;
    for (int h = 0; h < heads_; ++h) {
      const float *q = qkv + h * head_, *k = q + width_, *v = q + 2 * width_;
      float* p = probabilities(b, h);
      for (std::size_t e = 0; e + 1 < edges.size(); ++e) {  // S = Q·Kᵀ, causal rows
        const int r0 = edges[e], r1 = edges[e + 1];
        product(backend, r1 - r0, r1, head_, q + r0 * row, row, false, k, row, true, p + r0 * t, t, false);
      }
      kernels::causal_softmax_forward(1, t, scale_, p);
      for (std::size_t e = 0; e + 1 < edges.size(); ++e) {  // O = P·V
        const int r0 = edges[e], r1 = edges[e + 1];
        product(backend, r1 - r0, head_, r1, p + r0 * t, t, false, v, row, false, out + r0 * width_ + h * head_, width_,
                false);
      }
    }
  }
}

void CausalAttention::gemm_backward(kernels::Backend backend, int batch, const float* x, const float* dy, float* dx) {
  const int t = context_, row = 3 * width_;
  float* ds = ds_.data();
  const std::vector<int> edges = blocks();
  for (int b = 0; b < batch; ++b) {
    const float* qkv = x + static_cast<long>(b) * t * row;
    float* dqkv = dx + static_cast<long>(b) * t * row;
    const float* dout = dy + static_cast<long>(b) * t * width_;
    for (int h = 0; h < heads_; ++h) {
      const float *q = qkv + h * head_, *k = q + width_, *v = q + 2 * width_;
      float *dq = dqkv + h * head_, *dk = dq + width_, *dv = dq + 2 * width_;
      const float* p = probabilities(b, h);
      const float* d_o = dout + h * head_;
      for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
        const int c0 = edges[e], c1 = edges[e + 1];
        // dV = Pᵀ·dO over the queries that reach these keys; dP = dO·Vᵀ, causal rows.
        product(backend, c1 - c0, head_, t - c0, p + c0 * t + c0, t, true, d_o + c0 * width_, width_, false,
                dv + c0 * row, row, false);
        product(backend, c1 - c0, c1, head_, d_o + c0 * width_, width_, false, v, row, true, ds + c0 * t, t, false);
      }
      kernels::causal_softmax_backward(1, t, scale_, p, ds);
      for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
        const int c0 = edges[e], c1 = edges[e + 1];
        // dQ = dS·K, causal rows; dK = dSᵀ·Q over the queries that reach these keys.
        product(backend, c1 - c0, head_, c1, ds + c0 * t, t, false, k, row, false, dq + c0 * row, row, false);
        product(backend, c1 - c0, head_, t - c0, ds + c0 * t + c0, t, true, q + c0 * row, row, false, dk + c0 * row,
                row, false);
      }
    }
  }
}

}  // namespace starling
