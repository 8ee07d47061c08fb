// Exact GELU (learners/layers/gelu.h) on the vectorized sequence kernels.
#include "learners/layers/gelu.h"

#include "kernels/sequence_ops.h"

namespace starling {

void Gelu::forward(kernels::Backend, int batch, const float* x, float* y) {
  const long n = static_cast<long>(batch) * static_cast<long>(in_.size());
  slope_elements_ = training_ ? n : 0;
  if (training_) slope_.reserve(static_cast<std::size_t>(n));
  kernels::gelu_forward(n, x, y, training_ ? slope_.data() : nullptr);
}

// With the forward's derivative, dx = dy·slope; without one (the forward ran in evaluation
// mode, or on another batch size), the derivative is taken again from x.
void Gelu::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const long n = static_cast<long>(batch) * static_cast<long>(in_.size());
  if (slope_elements_ != n) return kernels::gelu_backward(n, x, dy, dx);
  const float* slope = slope_.data();
  for (long i = 0; i < n; ++i) dx[i] = dy[i] * slope[i];
}

}  // namespace starling
