// Exact GELU (learners/layers/gelu.h) on the vectorized sequence kernels.
#include "learners/layers/gelu.h"

#include "kernels/sequence_ops.h"

namespace starling {

void Gelu::forward(kernels::Backend, int batch, const float* x, float* y) {
  kernels::gelu_forward(static_cast<long>(batch) * static_cast<long>(in_.size()), x, y);
}

void Gelu::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  if (dx) kernels::gelu_backward(static_cast<long>(batch) * static_cast<long>(in_.size()), x, dy, dx);
}

}  // namespace starling
