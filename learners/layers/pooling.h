#pragma once
// Max-pooling over non-overlapping or strided windows, NHWC.
#include "kernels/ops.h"
#include "learners/aligned_buffer.h"
#include "learners/layer.h"

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

 private:
  kernels::PoolShape shape(int batch) const;

  Shape in_;
  int size_, stride_;
  AlignedBuffer<int32_t> argmax_;
};

}  // namespace starling
