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

}  // namespace starling
