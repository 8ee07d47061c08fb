#pragma once
// Group normalisation (Wu & He, 2018) on NHWC: each sample's channels are cut into `groups`
// groups, each normalised over its channels and positions to zero mean and unit variance,
// then scaled and shifted per channel (gamma, beta). No running statistics: a sample is
// normalised by itself, so averaging models across peers needs nothing beyond the arena.
// A ReLU after it is applied in the same pass (absorbs_relu).
#include "kernels/ops.h"
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

namespace starling {

class GroupNorm final : public Layer {
 public:
  /// Throws std::invalid_argument unless groups divides the channels.
  GroupNorm(Shape in, int groups);

  std::string name() const override;
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return in_; }
  std::size_t param_count() const override { return 2 * static_cast<std::size_t>(in_.c); }
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void reserve(int batch) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;
  bool can_apply_relu() const override { return true; }
  bool absorbs_relu() const override { return true; }

 private:
  kernels::NormShape shape(int batch) const;

  Shape in_;
  int groups_;
  float *gamma_ = nullptr, *beta_ = nullptr, *dgamma_ = nullptr, *dbeta_ = nullptr;
  AlignedBuffer<float> mean_, rstd_;  // per sample and group, from the forward pass
  AlignedBuffer<float> scratch_;
};

}  // namespace starling
