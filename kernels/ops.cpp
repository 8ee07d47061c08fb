// Non-GEMM kernels: per-ISA dispatch of the vectorized ones (bodies in ops_impl.h) and the
// small scalar ones (softmax cross-entropy, argmax) that run once per batch row.
#include "kernels/ops.h"

#include "kernels/ops_impl.h"
#include "platform/isa_dispatch.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include <algorithm>
#include <cmath>

namespace starling::kernels {

namespace ops_detail {
namespace {

// SSE moves (baseline x86-64; NEON on AArch64) for short runs: a plain loop would become a
// memcpy call per run.
struct BaselineRuns {
  static constexpr bool kSelectPoolGradient = false;
  static void copy(float* d, const float* s, long n) {
    long i = 0;
#if defined(__x86_64__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(d + i, _mm_loadu_ps(s + i));
#elif defined(__ARM_NEON)
    for (; i + 4 <= n; i += 4) vst1q_f32(d + i, vld1q_f32(s + i));
#endif
    for (; i < n; ++i) d[i] = s[i];
  }
  using Fixed = PlainFixed<BaselineRuns>;
  static void transpose(int rows, int cols, const float* a, float* at) { blocked_transpose(rows, cols, a, at); }
};

}  // namespace

constexpr OpsTable kOpsBaseline = make_table<BaselineRuns>();

}  // namespace ops_detail

namespace {

// Decided per call, like the GEMM, so force_isa and STARLING_ISA reach these kernels too.
constexpr platform::IsaDispatch<const ops_detail::OpsTable*> kOps{
    &ops_detail::kOpsBaseline, STARLING_X86_64_ONLY(&ops_detail::kOpsAvx2), STARLING_X86_64_ONLY(&ops_detail::kOpsAvx512)};

const ops_detail::OpsTable& ops() { return *kOps.get(); }

}  // namespace

void im2col(const ConvShape& s, const float* x, float* cols) { ops().im2col(s, x, cols); }

void col2im(const ConvShape& s, const float* dcols, float* dx) { ops().col2im(s, dcols, dx); }

void maxpool_forward(const PoolShape& s, const float* x, float* y, int32_t* argmax) {
  ops().maxpool_forward(s, x, y, argmax);
}

void maxpool_backward(const PoolShape& s, const float* dy, const int32_t* argmax, float* dx) {
  ops().maxpool_backward(s, dy, argmax, dx);
}

void relu_forward(long n, const float* x, float* y) { ops().relu_forward(n, x, y); }

void relu_backward(long n, const float* y, const float* dy, float* dx) { ops().relu_backward(n, y, dy, dx); }

void column_sums(int rows, int cols, const float* dy, float* db, bool accumulate) {
  ops().column_sums(rows, cols, dy, db, accumulate);
}

void groupnorm_forward(const NormShape& s, const float* x, const float* gamma, const float* beta, bool relu, float* y,
                       float* mean, float* rstd, float* scratch) {
  ops().groupnorm_forward(s, x, gamma, beta, relu, y, mean, rstd, scratch);
}

void groupnorm_backward(const NormShape& s, const float* x, const float* y, const float* dy, const float* gamma,
                        const float* mean, const float* rstd, float* dgamma, float* dbeta, float* dx, float* scratch) {
  ops().groupnorm_backward(s, x, y, dy, gamma, mean, rstd, dgamma, dbeta, dx, scratch);
}

void sgd_step(long n, float* w, const float* g, float* v, const SgdArgs& args) { ops().sgd_step(n, w, g, v, args); }

void transpose(int rows, int cols, const float* a, float* at) { ops().transpose(rows, cols, a, at); }

void sma_correct(long n, const float* z, float* w, float* sum, float alpha, bool accumulate) {
  ops().sma_correct(n, z, w, sum, alpha, accumulate);
}

void sma_center(long n, float* z, float* z_prev, const float* sum, float momentum) {
  ops().sma_center(n, z, z_prev, sum, momentum);
}

// Each exponential once, in double: the softmax is e_j / Σ e, so the gradient divides the
// row's exponentials (kept in dlogits meanwhile) rather than taking them again.
double softmax_xent(int batch, int classes, const float* logits, const int32_t* labels, float* dlogits) {
  double total = 0.0;
  const double inv_batch = 1.0 / batch;
  for (int i = 0; i < batch; ++i) {
    const float* z = logits + static_cast<long>(i) * classes;
    float* d = dlogits ? dlogits + static_cast<long>(i) * classes : nullptr;
    const int label = labels[i] >= 0 && labels[i] < classes ? labels[i] : 0;
    const float zmax = *std::max_element(z, z + classes);
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) {
      const double e = std::exp(static_cast<double>(z[j] - zmax));
      sum += e;
      if (d) d[j] = static_cast<float>(e);
    }
    total += std::log(sum) - (z[label] - zmax);
    const double scale = inv_batch / sum;
    for (int j = 0; d && j < classes; ++j) d[j] = static_cast<float>(d[j] * scale - (j == label ? inv_batch : 0.0));
  }
  return total / batch;
}

void argmax_rows(int rows, int cols, const float* x, int32_t* out) {
  for (int i = 0; i < rows; ++i) {
    const float* row = x + static_cast<long>(i) * cols;
    out[i] = static_cast<int32_t>(std::max_element(row, row + cols) - row);
  }
}

}  // namespace starling::kernels
