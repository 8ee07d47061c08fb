#pragma once
// A dense layer applied to every token of a sequence {1, T, in} → {1, T, out} (PyTorch's
// nn.Linear on [B, T, in]): the Dense layer's GEMMs with batch·T rows. The attention's QKV
// and output projections and the MLP's layers. Initialised as nanoGPT's: weights from
// N(0, init_std), biases zero.
#include "learners/layers/dense.h"
#include "learners/layers/embedding.h"

namespace starling {

class TokenDense final : public Layer {
 public:
  TokenDense(int context, int in, int out, float init_std = kGptInitStd)
      : context_(context), init_std_(init_std), dense_(in, out) {}

  std::string name() const override { return "token_" + dense_.name(); }
  Shape input_shape() const override { return {1, context_, dense_.input_shape().c}; }
  Shape output_shape() const override { return {1, context_, dense_.output_shape().c}; }
  std::size_t param_count() const override { return dense_.param_count(); }
  std::vector<ParamSpan> matrix_spans() const override { return dense_.matrix_spans(); }
  void bind(float* params, float* grads) override {
    params_ = params;
    dense_.bind(params, grads);
  }
  /// Dense's layout: the weights (its matrix span), then the biases.
  void init(std::mt19937_64& rng) override {
    std::normal_distribution<float> normal(0.f, init_std_);
    const std::size_t weights = matrix_spans().front().count;
    for (std::size_t i = 0; i < param_count(); ++i) params_[i] = i < weights ? normal(rng) : 0.f;
  }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override {
    dense_.forward(backend, batch * context_, x, y);
  }
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override {
    dense_.backward(backend, batch * context_, x, y, dy, dx);
  }

 private:
  int context_;
  float init_std_;
  Dense dense_;
  float* params_ = nullptr;
};

}  // namespace starling
