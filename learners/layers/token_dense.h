#pragma once
// A dense layer applied to every token of a sequence {1, T, in} → {1, T, out} (PyTorch's
// nn.Linear on [B, T, in]): the Dense layer's GEMMs with batch·T rows. The attention's QKV
// and output projections and the MLP's layers.
#include "learners/layers/dense.h"

namespace starling {

class TokenDense final : public Layer {
 public:
  TokenDense(int context, int in, int out) : context_(context), dense_(in, out) {}

  std::string name() const override { return "token_" + dense_.name(); }
  Shape input_shape() const override { return {1, context_, dense_.input_shape().c}; }
  Shape output_shape() const override { return {1, context_, dense_.output_shape().c}; }
  std::size_t param_count() const override { return dense_.param_count(); }
  std::vector<ParamSpan> matrix_spans() const override { return dense_.matrix_spans(); }
  void bind(float* params, float* grads) override { dense_.bind(params, grads); }
  void init(std::mt19937_64& rng) override { dense_.init(rng); }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override {
    dense_.forward(backend, batch * context_, x, y);
  }
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override {
    dense_.backward(backend, batch * context_, x, y, dy, dx);
  }

 private:
  int context_;
  Dense dense_;
};

}  // namespace starling
