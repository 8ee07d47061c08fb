// GroupNorm's passes are the per-ISA kernels of kernels/ops.h; the layer owns the
// parameters, the per-sample statistics the backward pass needs, and the scratch.
#include "learners/layers/group_norm.h"

#include <stdexcept>

namespace starling {

GroupNorm::GroupNorm(Shape in, int groups) : in_(in), groups_(groups) {
  if (groups < 1 || in.c % groups != 0)
    throw std::invalid_argument("groupnorm: " + std::to_string(groups) + " groups do not divide " +
                                std::to_string(in.c) + " channels");
}

std::string GroupNorm::name() const {
  return "groupnorm(" + std::to_string(groups_) + (relu_output_ ? ", relu)" : ")");
}

void GroupNorm::bind(float* params, float* grads) {
  gamma_ = params, beta_ = params + in_.c;
  dgamma_ = grads, dbeta_ = grads + in_.c;
}

void GroupNorm::init(std::mt19937_64&) {
  for (int ch = 0; ch < in_.c; ++ch) gamma_[ch] = 1.f, beta_[ch] = 0.f;
}

void GroupNorm::reserve(int batch) {
  mean_.reserve(static_cast<std::size_t>(batch) * groups_);
  rstd_.reserve(static_cast<std::size_t>(batch) * groups_);
  scratch_.reserve(static_cast<std::size_t>(kernels::groupnorm_scratch(in_.c)));
}

kernels::NormShape GroupNorm::shape(int batch) const {
  kernels::NormShape s;
  s.batch = batch, s.positions = static_cast<long>(in_.h) * in_.w, s.channels = in_.c, s.groups = groups_;
  return s;
}

void GroupNorm::forward(kernels::Backend, int batch, const float* x, float* y) {
  reserve(batch);
  kernels::groupnorm_forward(shape(batch), x, gamma_, beta_, relu_output_, y, mean_.data(), rstd_.data(),
                             scratch_.data());
}

void GroupNorm::backward(kernels::Backend, int batch, const float* x, const float* y, const float* dy, float* dx) {
  kernels::groupnorm_backward(shape(batch), x, relu_output_ ? y : nullptr, dy, gamma_, mean_.data(), rstd_.data(),
                              dgamma_, dbeta_, dx, scratch_.data());
}

}  // namespace starling
