#pragma once
// Fully connected layer: y[b×out] = x[b×in] · W[in×out] + bias, optionally ReLU-fused.
#include "learners/models/layer.h"

namespace starling {

class Dense final : public Layer {
 public:
  Dense(int in, int out);

  std::string name() const override;
  Shape input_shape() const override { return {1, 1, in_}; }
  Shape output_shape() const override { return {1, 1, out_}; }
  std::size_t param_count() const override;
  std::vector<ParamSpan> matrix_spans() const override { return {{0, static_cast<std::size_t>(in_) * out_}}; }
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;
  bool backward_update(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                       float* dx, const ParamUpdate& update) override;
  bool can_apply_relu() const override { return true; }
  bool can_mask_relu_input() const override { return true; }

 private:
  int in_, out_;
  float* w_ = nullptr;  // in × out
  float* b_ = nullptr;  // out
  float* dw_ = nullptr;
  float* db_ = nullptr;

  // Both backwards: with an update, the parameters take it instead of keeping their gradient.
  void backward_with(kernels::Backend backend, int batch, const float* x, const float* dy, float* dx,
                     const ParamUpdate* update);
  // dW = xᵀ·dy into dw_, or, with an update, straight into the weights' SGD step.
  void weight_gradient(kernels::Backend backend, int batch, const float* x, const float* dy,
                       const ParamUpdate* update);
  // dx = dy·Wᵀ, masked where the input came out of a ReLU at 0.
  void input_gradient(kernels::Backend backend, int batch, const float* x, const float* dy, float* dx);
};

}  // namespace starling
