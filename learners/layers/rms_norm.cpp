// RMSNorm per token (learners/layers/rms_norm.h), statistics in double per token.
#include "learners/layers/rms_norm.h"

#include <algorithm>
#include <cmath>

namespace starling {

void RmsNorm::init(std::mt19937_64&) { std::fill(gamma_, gamma_ + in_.c, 1.f); }

void RmsNorm::forward(kernels::Backend, int batch, const float* x, float* y) {
  const int c = in_.c;
  rms_.resize(static_cast<std::size_t>(tokens(batch)));
  for (long t = 0; t < tokens(batch); ++t) {
    const float* xt = x + t * c;
    double sum = 0.0;
    for (int i = 0; i < c; ++i) sum += static_cast<double>(xt[i]) * xt[i];
    const auto r = static_cast<float>(1.0 / std::sqrt(sum / c + kRmsNormEpsilon));
    rms_[static_cast<std::size_t>(t)] = r;
    for (int i = 0; i < c; ++i) y[t * c + i] = xt[i] * r * gamma_[i];
  }
}

void RmsNorm::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  const int c = in_.c;
  std::fill(dgamma_, dgamma_ + c, 0.f);
  for (long t = 0; t < tokens(batch); ++t) {
    const float *xt = x + t * c, *dyt = dy + t * c;
    const float r = rms_[static_cast<std::size_t>(t)];
    double dot = 0.0;  // Σ gamma·dy·x
    for (int i = 0; i < c; ++i) {
      dgamma_[i] += dyt[i] * xt[i] * r;
      dot += static_cast<double>(gamma_[i]) * dyt[i] * xt[i];
    }
    if (!dx) continue;
    const auto k = static_cast<float>(static_cast<double>(r) * r * r * dot / c);
    for (int i = 0; i < c; ++i) dx[t * c + i] = r * gamma_[i] * dyt[i] - xt[i] * k;
  }
}

}  // namespace starling
