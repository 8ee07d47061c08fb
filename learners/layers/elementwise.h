#pragma once
// Layers without parameters that do not change the data's size: ReLU and Flatten.
#include "learners/models/layer.h"

namespace starling {

class ReLU final : public Layer {
 public:
  explicit ReLU(Shape in) : in_(in) {}
  std::string name() const override { return "relu"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return in_; }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  Shape in_;
};

/// NHWC is already row-major per sample, so flattening only renames the shape.
class Flatten final : public Layer {
 public:
  explicit Flatten(Shape in) : in_(in) {}
  std::string name() const override { return "flatten"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return {1, 1, static_cast<int>(in_.size())}; }
  bool renames_only() const override { return true; }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  Shape in_;
};

}  // namespace starling
