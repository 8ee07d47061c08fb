#include "learners/layers/elementwise.h"

#include "kernels/ops.h"

#include <algorithm>

namespace starling {

void ReLU::forward(kernels::Backend, int batch, const float* x, float* y) {
  kernels::relu_forward(batch * in_.size(), x, y);
}

void ReLU::backward(kernels::Backend, int batch, const float*, const float* y, const float* dy, float* dx) {
  if (dx) kernels::relu_backward(batch * in_.size(), y, dy, dx);
}

void Flatten::forward(kernels::Backend, int batch, const float* x, float* y) {
  std::copy(x, x + batch * in_.size(), y);
}

void Flatten::backward(kernels::Backend, int batch, const float*, const float*, const float* dy, float* dx) {
  if (dx) std::copy(dy, dy + batch * in_.size(), dx);
}

}  // namespace starling
