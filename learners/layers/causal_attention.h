#pragma once
// Causal multi-head self-attention's core, without parameters: the input is each token's
// fused projection [q | k | v] (3·C wide, head h's q at h·d, its k at C + h·d, its v at
// 2·C + h·d, d = C / heads), the output each token's heads side by side (C wide):
//   P = softmax(Q·Kᵀ/√d with the future masked out),  O = P·V,  per sample and head.
// Each sample's head runs through the fused kernels (kernels/attention.h) on either backend:
// oneDNN has no causal attention, and per-head GEMM calls cost more than their work. The
// forward keeps P alone (batch × heads × T × T, the upper triangle zero); the backward turns
// dP into dS in one T × T scratch, so the T × T matrix is held twice in no pass. The
// projections around it are TokenDense layers.
#include "kernels/attention.h"
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

namespace starling {

class CausalAttention final : public Layer {
 public:
  /// Throws std::invalid_argument unless heads divide width and all are positive.
  CausalAttention(int context, int width, int heads);

  std::string name() const override;
  Shape input_shape() const override { return {1, context_, 3 * width_}; }
  Shape output_shape() const override { return {1, context_, width_}; }
  void reserve(int batch) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  kernels::AttentionHead head_of(const float* qkv, int h) const;  // head h of one sample's rows
  float* probabilities(int b, int h) { return p_.data() + (static_cast<std::size_t>(b) * heads_ + h) * context_ * context_; }
  int context_, width_, heads_, head_;
  float scale_;
  AlignedBuffer<float> p_;           // the forward's P
  AlignedBuffer<float> ds_;          // the backward's dP, then dS, for one head
  AlignedBuffer<float> transposed_;  // Kᵀ or Vᵀ of one head
};

}  // namespace starling
