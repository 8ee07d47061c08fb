// LayerNorm's passes are the per-ISA sequence kernels; the layer owns the parameters and
// the per-token statistics the backward pass needs.
#include "learners/layers/layer_norm.h"

#include "kernels/sequence_ops.h"

namespace starling {

void LayerNorm::bind(float* params, float* grads) {
  gamma_ = params, beta_ = params + in_.c;
  dgamma_ = grads, dbeta_ = grads + in_.c;
}

void LayerNorm::init(std::mt19937_64&) {
  for (int ch = 0; ch < in_.c; ++ch) gamma_[ch] = 1.f, beta_[ch] = 0.f;
}

void LayerNorm::reserve(int batch) {
  mean_.reserve(static_cast<std::size_t>(tokens(batch)));
  rstd_.reserve(static_cast<std::size_t>(tokens(batch)));
}

void LayerNorm::forward(kernels::Backend, int batch, const float* x, float* y) {
  reserve(batch);
  kernels::layernorm_forward(tokens(batch), in_.c, x, gamma_, beta_, y, mean_.data(), rstd_.data());
}

void LayerNorm::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  kernels::layernorm_backward(tokens(batch), in_.c, x, dy, gamma_, mean_.data(), rstd_.data(), dgamma_, dbeta_, dx);
}

}  // namespace starling
