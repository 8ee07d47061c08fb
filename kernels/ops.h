#pragma once
// Non-GEMM kernels of training, on NHWC activations (batch, height, width, channels).
// Convolution is im2col into the GEMM: a patch row per output pixel, (kh, kw, c) order.
#include "kernels/sgd_args.h"

#include <cstdint>

namespace starling::kernels {

struct ConvShape {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int kernel = 0, stride = 1, pad = 0, out_c = 0;
  int out_h() const { return (in_h + 2 * pad - kernel) / stride + 1; }
  int out_w() const { return (in_w + 2 * pad - kernel) / stride + 1; }
  long patch() const { return static_cast<long>(kernel) * kernel * in_c; }
  long rows() const { return static_cast<long>(batch) * out_h() * out_w(); }
};

/// cols[rows × patch] from x[batch, in_h, in_w, in_c]; padding reads as zero.
void im2col(const ConvShape& s, const float* x, float* cols);
/// dx[batch, in_h, in_w, in_c] = Σ of dcols scattered back (overwrites dx).
void col2im(const ConvShape& s, const float* dcols, float* dx);

struct PoolShape {
  int batch = 0, in_h = 0, in_w = 0, channels = 0, size = 2, stride = 2;
  int out_h() const { return (in_h - size) / stride + 1; }
  int out_w() const { return (in_w - size) / stride + 1; }
};

/// y = max over each window; argmax[i] is the input offset (within the sample) of y[i].
/// Ties go to the first element in window order (row by row).
void maxpool_forward(const PoolShape& s, const float* x, float* y, int32_t* argmax);
/// dx = 0 except dy routed to each window's argmax (overwrites dx).
void maxpool_backward(const PoolShape& s, const float* dy, const int32_t* argmax, float* dx);

void relu_forward(long n, const float* x, float* y);
/// dx = dy where y > 0, else 0.
void relu_backward(long n, const float* y, const float* dy, float* dx);

/// db[j] (=|+=) Σ_i dy[i, j] over rows × cols.
void column_sums(int rows, int cols, const float* dy, float* db, bool accumulate);

/// Group normalisation over [batch, positions, channels]: each sample's channels are cut
/// into `groups` runs of channels/groups consecutive channels, each normalised over its
/// channels and positions.
struct NormShape {
  int batch = 0;
  long positions = 0;
  int channels = 0, groups = 1;
};
constexpr float kGroupNormEpsilon = 1e-5f;
/// Floats of scratch the group-normalisation kernels need.
inline long groupnorm_scratch(int channels) { return 3L * channels; }
/// y = (x − mean_g)·rstd_g·gamma + beta, then ReLU when `relu`; writes mean and rstd
/// [batch × groups], rstd = 1/√(variance + ε).
void groupnorm_forward(const NormShape& s, const float* x, const float* gamma, const float* beta, bool relu, float* y,
                       float* mean, float* rstd, float* scratch);
/// Overwrites dgamma and dbeta and, unless null, dx, from the forward's x, mean and rstd.
/// With y (the forward's output) not null, the forward applied ReLU and dy is masked by y > 0.
void groupnorm_backward(const NormShape& s, const float* x, const float* y, const float* dy, const float* gamma,
                        const float* mean, const float* rstd, float* dgamma, float* dbeta, float* dx, float* scratch);

/// SGD with momentum μ and weight decay over n parameters, velocity v (sgd_args.h).
void sgd_step(long n, float* w, const float* g, float* v, const SgdArgs& args);

/// One replica's SMA correction over n parameters: c = α (w − z), w ← w − c, and
/// sum ← c (accumulate: sum += c).
void sma_correct(long n, const float* z, float* w, float* sum, float alpha, bool accumulate);
/// The central model's SMA move: z ← z + μ (z − z_prev) + sum and z_prev ← the old z;
/// with z_prev null, z ← z + sum.
void sma_center(long n, float* z, float* z_prev, const float* sum, float momentum);

/// Mean softmax cross-entropy of logits[batch × classes] against labels; writes
/// dlogits = (softmax − onehot) / batch when dlogits is not null. Labels outside
/// [0, classes) are the caller's bug and are treated as class 0.
double softmax_xent(int batch, int classes, const float* logits, const int32_t* labels, float* dlogits);

/// at[cols × rows] = a[rows × cols]ᵀ, in blocks that keep both sides' lines in L1.
void transpose(int rows, int cols, const float* a, float* at);

/// Index of the largest logit per row.
void argmax_rows(int rows, int cols, const float* x, int32_t* out);

}  // namespace starling::kernels
