#pragma once
// LayerNorm over the channels of each token of a sequence {1, T, C} (PyTorch's
// nn.LayerNorm(C), ε = 1e-5): y = (x − mean)·rstd·gamma + beta per token, on the sequence
// kernels (kernels/sequence_ops.h). Parameters: gamma then beta, C each.
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

namespace starling {

class LayerNorm final : public Layer {
 public:
  explicit LayerNorm(Shape in) : in_(in) {}

  std::string name() const override { return "layernorm"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return in_; }
  std::size_t param_count() const override { return 2 * static_cast<std::size_t>(in_.c); }
  void bind(float* params, float* grads) override;
  /// gamma = 1, beta = 0.
  void init(std::mt19937_64& rng) override;
  void reserve(int batch) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  long tokens(int batch) const { return static_cast<long>(batch) * in_.h * in_.w; }
  Shape in_;
  float *gamma_ = nullptr, *beta_ = nullptr, *dgamma_ = nullptr, *dbeta_ = nullptr;
  AlignedBuffer<float> mean_, rstd_;  // per token, from the forward pass
};

}  // namespace starling
