#pragma once
// Pooling on NHWC: the maximum or the mean over non-overlapping or strided windows, and the
// global average over all positions.
#include "kernels/ops.h"
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

#include <cstdint>

namespace starling {

class MaxPool2D final : public Layer {
 public:
  /// Throws std::invalid_argument when the window does not fit the input.
  MaxPool2D(Shape in, int size, int stride);

  std::string name() const override;
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override;
  void reserve(int batch) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;
  int size() const { return size_; }
  /// Whether the windows tile the input (stride = size), as a fused pool needs.
  bool tiles() const { return stride_ == size_; }

 private:
  kernels::PoolShape shape(int batch) const;

  Shape in_;
  int size_, stride_;
  AlignedBuffer<int32_t> argmax_;
};

/// Each channel's mean over size×size windows, `stride` apart (no padding).
class AvgPool2D final : public Layer {
 public:
  /// Throws std::invalid_argument when the window does not fit the input.
  AvgPool2D(Shape in, int size, int stride);

  std::string name() const override { return "avgpool2d(" + std::to_string(size_) + ")"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  Shape in_;
  int size_, stride_;
};

/// Each channel's mean over all positions: h×w×c → 1×1×c.
class GlobalAvgPool final : public Layer {
 public:
  explicit GlobalAvgPool(Shape in) : in_(in) {}
  std::string name() const override { return "global_avgpool"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return {1, 1, in_.c}; }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  Shape in_;
};

}  // namespace starling
