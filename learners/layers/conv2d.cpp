// 2-D convolution layer: im2col + GEMM in chunks of samples whose patches stay in cache, or,
// for the stride-1 shapes that kernels/direct_conv.h supports on the native backend where the
// CPU has the kernels, the direct convolution for the forward pass and the weight gradient,
// and for the input gradient too where the padding is "same" (with less, the flipped window
// would multiply a border of zeros wider than the input: im2col's GEMM does less work).
// A fused max pool runs the whole layer chunk by chunk of samples (pool_chunk).
#include "learners/layers/conv2d.h"

#include "kernels/direct_conv.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace starling {

Conv2D::Conv2D(Shape in, int out_channels, int kernel, int stride, int pad, bool bias)
    : in_(in), out_c_(out_channels), kernel_(kernel), stride_(stride), pad_(pad), bias_(bias) {
  if (out_channels < 1 || kernel < 1 || stride < 1 || pad < 0 || in.h + 2 * pad < kernel ||
      in.w + 2 * pad < kernel)
    throw std::invalid_argument("conv2d: kernel " + std::to_string(kernel) + " does not fit input " +
                                std::to_string(in.h) + "x" + std::to_string(in.w));
}

std::string Conv2D::name() const {
  return "conv2d(" + std::to_string(kernel_) + "x" + std::to_string(kernel_) + "x" + std::to_string(out_c_) +
         (stride_ > 1 ? ", stride " + std::to_string(stride_) : "") + (pad_ > 0 ? ", pad " + std::to_string(pad_) : "") +
         (bias_ ? "" : ", no bias") + (relu_output_ ? ", relu)" : ")") +
         // The fused pool named as its own layer was, after Model::signature's separator, so
         // that fusing changes no model's signature (checkpoints name it).
         (pool_ ? "|maxpool2d(" + std::to_string(pool_) + ")" : "");
}

kernels::ConvShape Conv2D::shape(int batch) const {
  kernels::ConvShape s;
  s.batch = batch, s.in_h = in_.h, s.in_w = in_.w, s.in_c = in_.c;
  s.kernel = kernel_, s.stride = stride_, s.pad = pad_, s.out_c = out_c_;
  return s;
}

kernels::PoolShape Conv2D::pool_shape(int batch) const {
  const auto s = shape(batch);
  kernels::PoolShape p;
  p.batch = batch, p.in_h = s.out_h(), p.in_w = s.out_w(), p.channels = out_c_, p.size = pool_, p.stride = pool_;
  return p;
}

long Conv2D::conv_sample() const { return shape(1).rows() * out_c_; }

Shape Conv2D::output_shape() const {
  const auto s = shape(1);
  if (!pool_) return {s.out_h(), s.out_w(), out_c_};
  const auto p = pool_shape(1);
  return {p.out_h(), p.out_w(), out_c_};
}

void Conv2D::set_max_pool(int size) {
  const auto s = shape(1);
  if (size < 1 || size > s.out_h() || size > s.out_w())
    throw std::invalid_argument("conv2d: max pool window " + std::to_string(size) + " does not fit output " +
                                std::to_string(s.out_h()) + "x" + std::to_string(s.out_w()));
  pool_ = size;
}

std::size_t Conv2D::param_count() const {
  return static_cast<std::size_t>(shape(1).patch()) * out_c_ + (bias_ ? out_c_ : 0);
}

std::vector<ParamSpan> Conv2D::matrix_spans() const {
  return {{0, static_cast<std::size_t>(shape(1).patch()) * out_c_}};
}

void Conv2D::bind(float* params, float* grads) {
  const long weights = shape(1).patch() * out_c_;
  w_ = params, b_ = bias_ ? params + weights : nullptr;
  dw_ = grads, db_ = bias_ ? grads + weights : nullptr;
}

void Conv2D::init(std::mt19937_64& rng) {
  const long patch = shape(1).patch();
  std::normal_distribution<float> normal(0.f, std::sqrt(2.f / static_cast<float>(patch)));
  for (long i = 0; i < patch * out_c_; ++i) w_[i] = normal(rng);
  for (int j = 0; b_ && j < out_c_; ++j) b_[j] = 0.f;
}

namespace {

// Patch rows per GEMM call: im2col expands the input up to kernel² times (6.5 MB at the CNN's
// second layer and batch 32), so the whole batch's patches would go to memory and back.
// Chunks of whole samples whose patches fit in about half of L2 are consumed while cached.
constexpr long kChunkBytes = 512 << 10;
constexpr long kPoolChunkBytes = 128 << 10;
// The input-gradient GEMM reads Wᵀ in place only below this many rows (the blocked kernel's
// pack_b_min_m); above it every chunk would repack Wᵀ.
constexpr long kDxChunkRows = 127;

int samples_per_chunk(const kernels::ConvShape& s, long max_rows) {
  const long per_sample = s.rows() / std::max(s.batch, 1);
  const long by_bytes = kChunkBytes / std::max<long>(per_sample * s.patch() * 4, 1);
  const long by_rows = max_rows / std::max<long>(per_sample, 1);
  return static_cast<int>(std::clamp<long>(std::min(by_bytes, by_rows), 1, std::max(s.batch, 1)));
}

}  // namespace

void Conv2D::reserve(int batch) {
  const auto s = shape(batch);
  const long per_sample = shape(1).rows() * s.patch();
  cols_.reserve(per_sample * samples_per_chunk(s, s.rows()));
  dcols_.reserve(per_sample * samples_per_chunk(s, kDxChunkRows));
  wt_.reserve(s.patch() * out_c_);
  dwt_.reserve(s.patch() * out_c_);
  if (pool_) {
    conv_out_.reserve(static_cast<std::size_t>(pool_chunk(batch) * conv_sample()));
    argmax_.reserve(static_cast<std::size_t>(batch) * output_shape().size());
  }
  if (kernels::direct_conv_supported(s) && s.pad > 0) {
    const long dy_padded = kernels::direct_input_gradient_supported(s) ? kernels::padded_size(kernels::transposed(s)) : 0;
    padded_.reserve(static_cast<std::size_t>(std::max(kernels::padded_size(s), dy_padded)));
  }
}

bool Conv2D::direct(kernels::Backend backend, int batch) const {
  return backend == kernels::Backend::native && kernels::direct_conv_supported(shape(batch));
}

// The direct kernels read x inside its zero border: x itself where the padding is 0, else
// the copy in padded_, which `fill` writes. Unpooled, the weight gradient reads the forward's
// copy again; pooled, padded_ holds one chunk at a time and is filled again.
const float* Conv2D::bordered(const kernels::ConvShape& s, const float* x, bool fill) {
  if (s.pad == 0) return x;
  if (fill) kernels::pad_input(s, x, padded_.data());
  return padded_.data();
}

// Samples per chunk of a pooled convolution: as many as keep its unpooled output within
// kPoolChunkBytes, in L2 beside the chunk's input and the weights, where the pool reads it
// (and its gradient is written) instead of in memory.
int Conv2D::pool_chunk(int batch) const {
  const long bytes = 4 * conv_sample();
  return static_cast<int>(std::clamp<long>(kPoolChunkBytes / std::max<long>(bytes, 1), 1, std::max(batch, 1)));
}

void Conv2D::forward(kernels::Backend backend, int batch, const float* x, float* y) {
  reserve(batch);
  if (!pool_) return convolve(backend, batch, x, y);
  const int step = pool_chunk(batch);
  const long out = output_shape().size();
  for (int n0 = 0; n0 < batch; n0 += step) {
    const int c = std::min(step, batch - n0);
    convolve(backend, c, x + n0 * in_.size(), conv_out_.data());
    kernels::maxpool_forward(pool_shape(c), conv_out_.data(), y + n0 * out, argmax_.data() + n0 * out);
  }
}

// y = conv(x) + b, unpooled: direct, or im2col(x[chunk]) · W + b chunk by chunk.
void Conv2D::convolve(kernels::Backend backend, int batch, const float* x, float* y) {
  const auto s = shape(batch);
  if (direct(backend, batch)) return kernels::direct_conv(s, bordered(s, x, true), w_, b_, relu_output_, y);
  const int step = samples_per_chunk(s, s.rows());
  for (int n0 = 0; n0 < batch; n0 += step) {
    const auto c = shape(std::min(step, batch - n0));
    kernels::im2col(c, x + n0 * in_.size(), cols_.data());
    kernels::GemmArgs g;
    g.m = static_cast<int>(c.rows()), g.n = out_c_, g.k = static_cast<int>(c.patch());
    g.a = cols_.data(), g.lda = g.k;
    g.b = w_, g.ldb = out_c_;
    g.c = y + n0 * conv_sample(), g.ldc = out_c_;
    g.bias = b_;
    g.relu = relu_output_;
    kernels::gemm(backend, g);
  }
}

// dW = Σ over chunks of colsᵀ · dy (added to dW with accumulate), the patches recomputed
// from x rather than kept from the forward pass (recomputing a cached chunk is cheaper than
// rereading it from memory). Where the patch is longer than out_c (3×3 kernels), dWᵀ =
// Σ dyᵀ · cols is computed instead, for the caller to transpose once: the patch is then the
// GEMM's column side, which the wide micro-kernel tiles fill, rather than a column side of
// out_c (16 at resnet8's first stage). The direct convolution computes dW or dWᵀ from the
// bordered input, without patches. Returns whether the gradient is dWᵀ in dwt_.
bool Conv2D::weight_gradient(kernels::Backend backend, int batch, const float* x, const float* dy, bool accumulate) {
  const auto s = shape(batch);
  if (direct(backend, batch))
    return kernels::direct_conv_weight_gradient(s, bordered(s, x, pool_ > 0), dy, dw_, dwt_.data(), accumulate);
  const bool transposed = s.patch() > out_c_;
  const int step = samples_per_chunk(s, s.rows());
  const int patch = static_cast<int>(s.patch());
  for (int n0 = 0; n0 < batch; n0 += step) {
    const auto c = shape(std::min(step, batch - n0));
    kernels::im2col(c, x + n0 * in_.size(), cols_.data());
    const float* dy_chunk = dy + n0 * conv_sample();
    kernels::GemmArgs g;
    g.k = static_cast<int>(c.rows()), g.trans_a = true, g.accumulate = accumulate || n0 > 0;
    if (transposed) {
      g.m = out_c_, g.n = patch;
      g.a = dy_chunk, g.lda = out_c_, g.b = cols_.data(), g.ldb = patch;
      g.c = dwt_.data(), g.ldc = patch;
    } else {
      g.m = patch, g.n = out_c_;
      g.a = cols_.data(), g.lda = patch, g.b = dy_chunk, g.ldb = out_c_;
      g.c = dw_, g.ldc = out_c_;
    }
    kernels::gemm(backend, g);
  }
  return transposed;
}

// The input gradient's weights, once per backward: the flipped window for the direct
// convolution of dy, or Wᵀ, which every GEMM chunk then reads in place.
void Conv2D::input_gradient_weights(bool direct_dx) {
  const auto s = shape(1);
  if (direct_dx) kernels::flip_weights(s, w_, wt_.data());
  else kernels::transpose(static_cast<int>(s.patch()), out_c_, w_, wt_.data());
}

// dx = direct_conv(dy, flipped W), or col2im(dy · Wᵀ) chunk by chunk. The ReLU mask of the
// input (x > 0) is applied to dx after col2im: every patch entry that lands on one input
// pixel carries that pixel's mask, so masking the sum is the same.
void Conv2D::input_gradient(kernels::Backend backend, int batch, const float* x, const float* dy, bool direct_dx,
                            float* dx) {
  const auto s = shape(batch);
  if (direct_dx) {
    const auto t = kernels::transposed(s);
    kernels::direct_conv(t, bordered(t, dy, true), wt_.data(), nullptr, false, dx);
  } else {
    const int patch = static_cast<int>(s.patch());
    const int step = samples_per_chunk(s, kDxChunkRows);
    for (int n0 = 0; n0 < batch; n0 += step) {
      const auto c = shape(std::min(step, batch - n0));
      kernels::GemmArgs g;
      g.m = static_cast<int>(c.rows()), g.n = patch, g.k = out_c_;
      g.a = dy + n0 * conv_sample(), g.lda = out_c_;
      g.b = wt_.data(), g.ldb = patch;
      g.c = dcols_.data(), g.ldc = patch;
      kernels::gemm(backend, g);
      kernels::col2im(c, dcols_.data(), dx + n0 * in_.size());
    }
  }
  if (relu_input_) kernels::relu_backward(static_cast<long>(batch) * in_.size(), x, dx, dx);
}

// With a pool, chunk by chunk: the pool's gradient routed back into the chunk's unpooled
// output gradient, in cache, and the convolution's gradients from it (the weight and bias
// gradients added up over the chunks).
void Conv2D::backward(kernels::Backend backend, int batch, const float* x, const float*, const float* dy,
                      float* dx) {
  reserve(batch);
  const bool direct_dx = direct(backend, batch) && kernels::direct_input_gradient_supported(shape(batch));
  if (dx) input_gradient_weights(direct_dx);
  const int step = pool_ ? pool_chunk(batch) : batch;
  const long out = output_shape().size();
  bool transposed = false;
  for (int n0 = 0; n0 < batch; n0 += step) {
    const int c = std::min(step, batch - n0);
    const float* xc = x + n0 * in_.size();
    const float* dyc = dy + n0 * out;
    if (pool_) {
      kernels::maxpool_backward(pool_shape(c), dyc, argmax_.data() + n0 * out, conv_out_.data());
      dyc = conv_out_.data();
    }
    transposed = weight_gradient(backend, c, xc, dyc, n0 > 0);  // first: the input gradient may reuse padded_
    if (db_) kernels::column_sums(static_cast<int>(shape(c).rows()), out_c_, dyc, db_, n0 > 0);
    if (dx) input_gradient(backend, c, xc, dyc, direct_dx, dx + n0 * in_.size());
  }
  if (transposed) kernels::transpose(out_c_, static_cast<int>(shape(1).patch()), dwt_.data(), dw_);
}

}  // namespace starling
