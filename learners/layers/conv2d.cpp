#include "learners/layers/conv2d.h"

#include <cmath>
#include <stdexcept>

namespace starling {

Conv2D::Conv2D(Shape in, int out_channels, int kernel, int stride, int pad)
    : in_(in), out_c_(out_channels), kernel_(kernel), stride_(stride), pad_(pad) {
  if (out_channels < 1 || kernel < 1 || stride < 1 || pad < 0 || in.h + 2 * pad < kernel ||
      in.w + 2 * pad < kernel)
    throw std::invalid_argument("conv2d: kernel " + std::to_string(kernel) + " does not fit input " +
                                std::to_string(in.h) + "x" + std::to_string(in.w));
}

std::string Conv2D::name() const {
  return "conv2d(" + std::to_string(kernel_) + "x" + std::to_string(kernel_) + "x" + std::to_string(out_c_) +
         (relu_output_ ? ", relu)" : ")");
}

kernels::ConvShape Conv2D::shape(int batch) const {
  kernels::ConvShape s;
  s.batch = batch, s.in_h = in_.h, s.in_w = in_.w, s.in_c = in_.c;
  s.kernel = kernel_, s.stride = stride_, s.pad = pad_, s.out_c = out_c_;
  return s;
}

Shape Conv2D::output_shape() const {
  const auto s = shape(1);
  return {s.out_h(), s.out_w(), out_c_};
}

std::size_t Conv2D::param_count() const { return static_cast<std::size_t>(shape(1).patch()) * out_c_ + out_c_; }

void Conv2D::bind(float* params, float* grads) {
  const long weights = shape(1).patch() * out_c_;
  w_ = params, b_ = params + weights;
  dw_ = grads, db_ = grads + weights;
}

void Conv2D::init(std::mt19937_64& rng) {
  const long patch = shape(1).patch();
  std::normal_distribution<float> normal(0.f, std::sqrt(2.f / static_cast<float>(patch)));
  for (long i = 0; i < patch * out_c_; ++i) w_[i] = normal(rng);
  for (int j = 0; j < out_c_; ++j) b_[j] = 0.f;
}

void Conv2D::reserve(int batch) {
  const auto s = shape(batch);
  cols_.reserve(s.rows() * s.patch());
  dcols_.reserve(s.rows() * s.patch());
}

void Conv2D::forward(kernels::Backend backend, int batch, const float* x, float* y) {
  const auto s = shape(batch);
  reserve(batch);
  kernels::im2col(s, x, cols_.data());
  kernels::GemmArgs g;
  g.m = static_cast<int>(s.rows()), g.n = out_c_, g.k = static_cast<int>(s.patch());
  g.a = cols_.data(), g.lda = g.k;
  g.b = w_, g.ldb = out_c_;
  g.c = y, g.ldc = out_c_;
  g.bias = b_;
  g.relu = relu_output_;
  kernels::gemm(backend, g);
}

void Conv2D::backward(kernels::Backend backend, int batch, const float*, const float*, const float* dy,
                      float* dx) {
  const auto s = shape(batch);
  const int rows = static_cast<int>(s.rows()), patch = static_cast<int>(s.patch());
  kernels::GemmArgs dw;  // dW = colsᵀ · dy
  dw.m = patch, dw.n = out_c_, dw.k = rows;
  dw.a = cols_.data(), dw.lda = patch, dw.trans_a = true;
  dw.b = dy, dw.ldb = out_c_;
  dw.c = dw_, dw.ldc = out_c_;
  kernels::gemm(backend, dw);
  kernels::column_sums(rows, out_c_, dy, db_, false);
  if (!dx) return;
  kernels::GemmArgs dc;  // dcols = dy · Wᵀ; cols holds x, so it doubles as the ReLU mask
  dc.m = rows, dc.n = patch, dc.k = out_c_;
  dc.a = dy, dc.lda = out_c_;
  dc.b = w_, dc.ldb = out_c_, dc.trans_b = true;
  dc.c = dcols_.data(), dc.ldc = patch;
  if (relu_input_) dc.relu_mask = cols_.data(), dc.ldmask = patch;
  kernels::gemm(backend, dc);
  kernels::col2im(s, dcols_.data(), dx);
}

}  // namespace starling
