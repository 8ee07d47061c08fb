#pragma once
// GELU, exact: y = x·Φ(x) = x·(1 + erf(x/√2))/2, as PyTorch's nn.GELU() (approximate='none')
// that nanoGPT uses, not the tanh approximation; dy/dx = Φ(x) + x·φ(x). In training the
// forward keeps that derivative (one float per element), so the backward is one product.
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

namespace starling {

class Gelu final : public Layer {
 public:
  explicit Gelu(Shape in) : in_(in) {}
  std::string name() const override { return "gelu"; }
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return in_; }
  void set_mode(bool training, uint64_t) override { training_ = training; }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  Shape in_;
  bool training_ = true;
  long slope_elements_ = 0;           // what slope_ holds: 0 after an evaluation forward
  AlignedBuffer<float> slope_;        // dy/dx from the last training forward
};

}  // namespace starling
