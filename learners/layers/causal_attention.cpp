// Causal self-attention on the GEMM and the vectorized causal softmax (learners/layers/causal_attention.h).
#include "learners/layers/causal_attention.h"

#include "kernels/sequence_ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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
}

void CausalAttention::forward(kernels::Backend backend, int batch, const float* x, float* y) {
  reserve(batch);
  const int t = context_, row = 3 * width_;
  for (int b = 0; b < batch; ++b) {
    const float* qkv = x + static_cast<long>(b) * t * row;
    float* out = y + static_cast<long>(b) * t * width_;
    for (int h = 0; h < heads_; ++h) {
      const float *q = qkv + h * head_, *k = q + width_, *v = q + 2 * width_;
      float* p = probabilities(b, h);
      product(backend, t, t, head_, q, row, false, k, row, true, p, t, false);  // S = Q·Kᵀ
      kernels::causal_softmax_forward(1, t, scale_, p);
      product(backend, t, head_, t, p, t, false, v, row, false, out + h * head_, width_, false);  // O = P·V
    }
  }
}

void CausalAttention::backward(kernels::Backend backend, int batch, const float* x, const float*, const float* dy,
                               float* dx) {
  if (!dx) return;
  const int t = context_, row = 3 * width_;
  for (int b = 0; b < batch; ++b) {
    const float* qkv = x + static_cast<long>(b) * t * row;
    float* dqkv = dx + static_cast<long>(b) * t * row;
    const float* dout = dy + static_cast<long>(b) * t * width_;
    for (int h = 0; h < heads_; ++h) {
      const float *q = qkv + h * head_, *k = q + width_, *v = q + 2 * width_;
      float *dq = dqkv + h * head_, *dk = dq + width_, *dv = dq + 2 * width_;
      const float* p = probabilities(b, h);
      const float* d_o = dout + h * head_;
      product(backend, t, head_, t, p, t, true, d_o, width_, false, dv, row, false);  // dV = Pᵀ·dO
      product(backend, t, t, head_, d_o, width_, false, v, row, true, ds_.data(), t, false);  // dP = dO·Vᵀ
      kernels::causal_softmax_backward(1, t, scale_, p, ds_.data());
      product(backend, t, head_, t, ds_.data(), t, false, k, row, false, dq, row, false);  // dQ = dS·K
      product(backend, t, head_, t, ds_.data(), t, true, q, row, false, dk, row, false);   // dK = dSᵀ·Q
    }
  }
}

}  // namespace starling
