#pragma once
// LayerNorm over the channels of each token of a sequence {1, T, C} (PyTorch's
// nn.LayerNorm(C), ε = 1e-5): y = (x − mean)·rstd·gamma + beta per token. It is GroupNorm
// with one group on {1, 1, C}, every token a sample of its own, so it runs GroupNorm's
// vectorized kernels.
#include "learners/layers/group_norm.h"

namespace starling {

class LayerNorm final : public Layer {
 public:
  explicit LayerNorm(Shape in) : in_(in), norm_(Shape{1, 1, in.c}, 1) {}

  std::string name() const override { return "layernorm"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return in_; }
  std::size_t param_count() const override { return norm_.param_count(); }
  void bind(float* params, float* grads) override { norm_.bind(params, grads); }
  /// gamma = 1, beta = 0.
  void init(std::mt19937_64& rng) override { norm_.init(rng); }
  void reserve(int batch) override { norm_.reserve(tokens(batch)); }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override {
    norm_.forward(backend, tokens(batch), x, y);
  }
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override {
    norm_.backward(backend, tokens(batch), x, y, dy, dx);
  }

 private:
  int tokens(int batch) const { return batch * in_.h * in_.w; }
  Shape in_;
  GroupNorm norm_;
};

}  // namespace starling
