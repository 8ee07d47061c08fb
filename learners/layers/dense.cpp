#include "learners/layers/dense.h"

#include "kernels/ops.h"

#include <cmath>

namespace starling {

Dense::Dense(int in, int out) : in_(in), out_(out) {}

std::string Dense::name() const {
  return "dense(" + std::to_string(in_) + "→" + std::to_string(out_) + (relu_output_ ? ", relu)" : ")");
}

std::size_t Dense::param_count() const { return static_cast<std::size_t>(in_) * out_ + out_; }

void Dense::bind(float* params, float* grads) {
  w_ = params;
  b_ = params + static_cast<long>(in_) * out_;
  dw_ = grads;
  db_ = grads + static_cast<long>(in_) * out_;
}

void Dense::init(std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.f, std::sqrt(2.f / static_cast<float>(in_)));
  for (long i = 0; i < static_cast<long>(in_) * out_; ++i) w_[i] = normal(rng);
  for (int j = 0; j < out_; ++j) b_[j] = 0.f;
}

void Dense::forward(kernels::Backend backend, int batch, const float* x, float* y) {
  kernels::GemmArgs g;
  g.m = batch, g.n = out_, g.k = in_;
  g.a = x, g.lda = in_;
  g.b = w_, g.ldb = out_;
  g.c = y, g.ldc = out_;
  g.bias = b_;
  g.relu = relu_output_;
  kernels::gemm(backend, g);
}

void Dense::backward(kernels::Backend backend, int batch, const float* x, const float*, const float* dy,
                     float* dx) {
  backward_with(backend, batch, x, dy, dx, nullptr);
}

bool Dense::backward_update(kernels::Backend backend, int batch, const float* x, const float*, const float* dy,
                            float* dx, const ParamUpdate& update) {
  backward_with(backend, batch, x, dy, dx, &update);
  return true;
}

void Dense::backward_with(kernels::Backend backend, int batch, const float* x, const float* dy, float* dx,
                          const ParamUpdate* update) {
  input_gradient(backend, batch, x, dy, dx);  // first: it reads the weights before any step
  weight_gradient(backend, batch, x, dy, update);
  kernels::column_sums(batch, out_, dy, db_, false);
  if (update) update->apply(b_, db_, static_cast<std::size_t>(out_));
}

void Dense::weight_gradient(kernels::Backend backend, int batch, const float* x, const float* dy,
                            const ParamUpdate* update) {
  kernels::GemmArgs dw;
  dw.m = in_, dw.n = out_, dw.k = batch;
  dw.a = x, dw.lda = in_, dw.trans_a = true;
  dw.b = dy, dw.ldb = out_;
  dw.c = update ? w_ : dw_, dw.ldc = out_;
  if (update) dw.velocity = update->velocity_of(w_), dw.sgd = update->sgd;
  kernels::gemm(backend, dw);
}

void Dense::input_gradient(kernels::Backend backend, int batch, const float* x, const float* dy, float* dx) {
  if (!dx) return;
  kernels::GemmArgs dxa;
  dxa.m = batch, dxa.n = in_, dxa.k = out_;
  dxa.a = dy, dxa.lda = out_;
  dxa.b = w_, dxa.ldb = out_, dxa.trans_b = true;
  dxa.c = dx, dxa.ldc = in_;
  if (relu_input_) dxa.relu_mask = x, dxa.ldmask = in_;
  kernels::gemm(backend, dxa);
}

}  // namespace starling
