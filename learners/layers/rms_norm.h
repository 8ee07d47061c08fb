#pragma once
// RMSNorm over the channels of each token of a sequence {1, T, C} (Zhang & Sennrich 2019,
// PyTorch's nn.RMSNorm(C, eps=1e-5)): y = x·r·gamma with r = 1/√(mean(x²) + ε), no shift.
// Scalar loops for now; the forward keeps r per token for the backward.
#include "learners/models/layer.h"

#include <vector>

namespace starling {

inline constexpr float kRmsNormEpsilon = 1e-5f;

class RmsNorm final : public Layer {
 public:
  explicit RmsNorm(Shape in) : in_(in) {}

  std::string name() const override { return "rmsnorm"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return in_; }
  std::size_t param_count() const override { return static_cast<std::size_t>(in_.c); }
  void bind(float* params, float* grads) override { gamma_ = params, dgamma_ = grads; }
  /// gamma = 1.
  void init(std::mt19937_64& rng) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  /// dgamma_c = Σ dy·x·r; dx = r·gamma·dy − x·r³·mean(gamma·dy·x), per token.
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  long tokens(int batch) const { return static_cast<long>(batch) * in_.h * in_.w; }
  Shape in_;
  float *gamma_ = nullptr, *dgamma_ = nullptr;
  std::vector<float> rms_;  // r per token, from the forward
};

}  // namespace starling
