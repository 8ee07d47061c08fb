// Exact GELU (learners/layers/gelu.h). Scalar erf for now: the vectorized kernel is for the
// session that tunes the GPT step.
#include "learners/layers/gelu.h"

#include <cmath>

namespace starling {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

}  // namespace

void Gelu::forward(kernels::Backend, int batch, const float* x, float* y) {
  const long n = batch * in_.size();
  for (long i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + std::erf(x[i] * kInvSqrt2));
}

void Gelu::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const long n = batch * in_.size();
  for (long i = 0; i < n; ++i) {
    const float cdf = 0.5f * (1.f + std::erf(x[i] * kInvSqrt2));
    const float pdf = kInvSqrt2Pi * std::exp(-0.5f * x[i] * x[i]);
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
}

}  // namespace starling
