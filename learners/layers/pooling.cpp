#include "learners/layers/pooling.h"

#include <stdexcept>

namespace starling {

MaxPool2D::MaxPool2D(Shape in, int size, int stride) : in_(in), size_(size), stride_(stride) {
  if (size < 1 || stride < 1 || in.h < size || in.w < size)
    throw std::invalid_argument("maxpool2d: window " + std::to_string(size) + " does not fit input " +
                                std::to_string(in.h) + "x" + std::to_string(in.w));
}

std::string MaxPool2D::name() const { return "maxpool2d(" + std::to_string(size_) + ")"; }

kernels::PoolShape MaxPool2D::shape(int batch) const {
  kernels::PoolShape s;
  s.batch = batch, s.in_h = in_.h, s.in_w = in_.w, s.channels = in_.c, s.size = size_, s.stride = stride_;
  return s;
}

Shape MaxPool2D::output_shape() const {
  const auto s = shape(1);
  return {s.out_h(), s.out_w(), in_.c};
}

void MaxPool2D::reserve(int batch) { argmax_.reserve(static_cast<std::size_t>(batch) * output_shape().size()); }

void MaxPool2D::forward(kernels::Backend, int batch, const float* x, float* y) {
  reserve(batch);
  kernels::maxpool_forward(shape(batch), x, y, argmax_.data());
}

void MaxPool2D::backward(kernels::Backend, int batch, const float*, const float*, const float* dy, float* dx) {
  if (dx) kernels::maxpool_backward(shape(batch), dy, argmax_.data(), dx);
}

AvgPool2D::AvgPool2D(Shape in, int size, int stride) : in_(in), size_(size), stride_(stride) {
  if (size < 1 || stride < 1 || in.h < size || in.w < size)
    throw std::invalid_argument("avgpool2d: window " + std::to_string(size) + " does not fit input " +
                                std::to_string(in.h) + "x" + std::to_string(in.w));
}

Shape AvgPool2D::output_shape() const { return {(in_.h - size_) / stride_ + 1, (in_.w - size_) / stride_ + 1, in_.c}; }

// Window by window, the channels innermost (contiguous in NHWC).
void AvgPool2D::forward(kernels::Backend, int batch, const float* x, float* y) {
  const Shape out = output_shape();
  const float inv = 1.f / static_cast<float>(size_ * size_);
  for (int s = 0; s < batch; ++s)
    for (int oh = 0; oh < out.h; ++oh)
      for (int ow = 0; ow < out.w; ++ow) {
        float* yo = y + s * out.size() + (static_cast<long>(oh) * out.w + ow) * in_.c;
        for (int ch = 0; ch < in_.c; ++ch) yo[ch] = 0.f;
        for (int i = 0; i < size_; ++i)
          for (int j = 0; j < size_; ++j) {
            const float* xi = x + s * in_.size() + (static_cast<long>(oh * stride_ + i) * in_.w + ow * stride_ + j) * in_.c;
            for (int ch = 0; ch < in_.c; ++ch) yo[ch] += xi[ch];
          }
        for (int ch = 0; ch < in_.c; ++ch) yo[ch] *= inv;
      }
}

// Each window's dy spread evenly over its inputs; overlapping windows add up.
void AvgPool2D::backward(kernels::Backend, int batch, const float*, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const Shape out = output_shape();
  const float inv = 1.f / static_cast<float>(size_ * size_);
  for (long i = 0; i < batch * in_.size(); ++i) dx[i] = 0.f;
  for (int s = 0; s < batch; ++s)
    for (int oh = 0; oh < out.h; ++oh)
      for (int ow = 0; ow < out.w; ++ow) {
        const float* dyo = dy + s * out.size() + (static_cast<long>(oh) * out.w + ow) * in_.c;
        for (int i = 0; i < size_; ++i)
          for (int j = 0; j < size_; ++j) {
            float* dxi = dx + s * in_.size() + (static_cast<long>(oh * stride_ + i) * in_.w + ow * stride_ + j) * in_.c;
            for (int ch = 0; ch < in_.c; ++ch) dxi[ch] += dyo[ch] * inv;
          }
      }
}

void GlobalAvgPool::forward(kernels::Backend, int batch, const float* x, float* y) {
  const long positions = static_cast<long>(in_.h) * in_.w;
  const float inv = 1.f / static_cast<float>(positions);
  for (int s = 0; s < batch; ++s) {
    const float* xs = x + s * in_.size();
    float* ys = y + static_cast<long>(s) * in_.c;
    for (int ch = 0; ch < in_.c; ++ch) ys[ch] = 0.f;
    for (long p = 0; p < positions; ++p)
      for (int ch = 0; ch < in_.c; ++ch) ys[ch] += xs[p * in_.c + ch];
    for (int ch = 0; ch < in_.c; ++ch) ys[ch] *= inv;
  }
}

void GlobalAvgPool::backward(kernels::Backend, int batch, const float*, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const long positions = static_cast<long>(in_.h) * in_.w;
  const float inv = 1.f / static_cast<float>(positions);
  for (int s = 0; s < batch; ++s) {
    const float* dys = dy + static_cast<long>(s) * in_.c;
    float* dxs = dx + s * in_.size();
    for (long p = 0; p < positions; ++p)
      for (int ch = 0; ch < in_.c; ++ch) dxs[p * in_.c + ch] = dys[ch] * inv;
  }
}

}  // namespace starling
