#pragma once
// 2-D convolution on NHWC, as im2col into the GEMM: y[rows×out_c] = cols[rows×patch] · W[patch×out_c]
// + bias, where rows = batch·out_h·out_w and patch = k·k·in_c. Optionally ReLU-fused, and
// without a bias where a normalisation follows (it would cancel the bias). Stride-1
// convolutions on the native backend run as a direct convolution instead, where the CPU has
// one (kernels/direct_conv.h). A max pool whose windows tile the output can be fused in
// (set_max_pool): the unpooled output and its gradient then exist a chunk of samples at a
// time, in cache, instead of as the whole batch's in memory.
#include "kernels/ops.h"
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

namespace starling {

class Conv2D final : public Layer {
 public:
  /// Throws std::invalid_argument when the kernel does not fit the padded input.
  Conv2D(Shape in, int out_channels, int kernel, int stride = 1, int pad = 0, bool bias = true);

  std::string name() const override;
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override;
  std::size_t param_count() const override;
  std::vector<ParamSpan> matrix_spans() const override;
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void reserve(int batch) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;
  bool can_apply_relu() const override { return true; }
  bool can_mask_relu_input() const override { return true; }
  /// Max-pools the output (after the ReLU, when fused) over size×size windows, size apart,
  /// as a MaxPool2D after the layer would. Throws std::invalid_argument when the window does
  /// not fit the output.
  void set_max_pool(int size);

 private:
  kernels::ConvShape shape(int batch) const;
  kernels::PoolShape pool_shape(int batch) const;
  long conv_sample() const;  // floats of one sample's unpooled output
  int pool_chunk(int batch) const;
  bool direct(kernels::Backend backend, int batch) const;
  const float* bordered(const kernels::ConvShape& s, const float* x, bool fill);
  void convolve(kernels::Backend backend, int batch, const float* x, float* y);
  bool weight_gradient(kernels::Backend backend, int batch, const float* x, const float* dy, bool accumulate);
  void input_gradient_weights(bool direct_dx);
  void input_gradient(kernels::Backend backend, int batch, const float* x, const float* dy, bool direct_dx, float* dx);

  Shape in_;
  int out_c_, kernel_, stride_, pad_;
  bool bias_;
  int pool_ = 0;  // the fused max pool's window (and stride); 0: none
  float* w_ = nullptr;  // patch × out_c
  float* b_ = nullptr;
  float* dw_ = nullptr;
  float* db_ = nullptr;
  AlignedBuffer<float> cols_;   // im2col of one chunk of samples
  AlignedBuffer<float> dcols_;  // patch gradients of one chunk
  AlignedBuffer<float> wt_;     // Wᵀ (out_c × patch) for the input gradient
  AlignedBuffer<float> dwt_;    // dWᵀ (out_c × patch), where the weight gradient is computed so
  // x with a zero border from the forward pass (read again by the weight gradient), then dy
  // with one for the input gradient, for the direct convolution; unused without padding.
  AlignedBuffer<float> padded_;
  AlignedBuffer<float> conv_out_;   // with a pool: one chunk's unpooled output, then its gradient
  AlignedBuffer<int32_t> argmax_;   // with a pool: the pool's argmax for the batch
};

}  // namespace starling
