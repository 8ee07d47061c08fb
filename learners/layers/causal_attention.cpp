// Causal self-attention on the fused per-head kernels (learners/layers/causal_attention.h).
#include "learners/layers/causal_attention.h"

#include <cmath>
#include <stdexcept>

namespace starling {

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

void CausalAttention::forward(kernels::Backend, int batch, const float* x, float* y) {
  reserve(batch);
  const long t = context_, row = 3 * width_;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads_; ++h)
      kernels::attention_forward(head_of(x + b * t * row, h), probabilities(b, h), y + b * t * width_ + h * head_,
                                 transposed_.data());
}

void CausalAttention::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const long t = context_, row = 3 * width_;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads_; ++h) {
      float* dq = dx + b * t * row + h * head_;
      kernels::attention_backward(head_of(x + b * t * row, h), probabilities(b, h), dy + b * t * width_ + h * head_, dq,
                                  dq + width_, dq + 2 * width_, ds_.data(), transposed_.data());
    }
}

}  // namespace starling
