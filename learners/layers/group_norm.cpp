// GroupNorm's passes run over a sample's positions with the channels innermost (NHWC), so
// every loop is a contiguous, vectorisable sweep; per-group quantities are folded into
// per-channel coefficients first.
#include "learners/layers/group_norm.h"

#include <cmath>
#include <stdexcept>

namespace starling {

GroupNorm::GroupNorm(Shape in, int groups) : in_(in), groups_(groups) {
  if (groups < 1 || in.c % groups != 0)
    throw std::invalid_argument("groupnorm: " + std::to_string(groups) + " groups do not divide " +
                                std::to_string(in.c) + " channels");
}

std::string GroupNorm::name() const { return "groupnorm(" + std::to_string(groups_) + ")"; }

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
  for (auto* b : {&sums_, &scale_, &shift_, &extra_}) b->reserve(static_cast<std::size_t>(in_.c));
}

namespace {

// out[ch] = Σ over positions of f(x[p·C + ch]) for every channel.
template <typename F>
void channel_sums(const float* x, long positions, int channels, float* out, F f) {
  for (int ch = 0; ch < channels; ++ch) out[ch] = 0.f;
  for (long p = 0; p < positions; ++p)
    for (int ch = 0; ch < channels; ++ch) out[ch] += f(x[p * channels + ch], ch);
}

}  // namespace

// Two passes (the mean, then the squared deviations from it), which stay accurate where the
// mean is large against the spread.
void GroupNorm::sample_statistics(const float* x, float* mean, float* rstd) {
  const int cg = in_.c / groups_;
  const long positions = static_cast<long>(in_.h) * in_.w;
  const double n = static_cast<double>(positions) * cg;
  channel_sums(x, positions, in_.c, sums_.data(), [](float v, int) { return v; });
  for (int g = 0; g < groups_; ++g) {
    double s = 0.0;
    for (int ch = g * cg; ch < (g + 1) * cg; ++ch) s += sums_[ch];
    mean[g] = static_cast<float>(s / n);
  }
  for (int ch = 0; ch < in_.c; ++ch) shift_[ch] = mean[ch / cg];
  channel_sums(x, positions, in_.c, sums_.data(), [this](float v, int ch) {
    const float d = v - shift_[ch];
    return d * d;
  });
  for (int g = 0; g < groups_; ++g) {
    double s = 0.0;
    for (int ch = g * cg; ch < (g + 1) * cg; ++ch) s += sums_[ch];
    rstd[g] = static_cast<float>(1.0 / std::sqrt(s / n + kEpsilon));
  }
}

// y = x · scale[ch] + shift[ch], with scale = rstd·gamma and shift = beta − mean·scale.
void GroupNorm::forward(kernels::Backend, int batch, const float* x, float* y) {
  reserve(batch);
  const int cg = in_.c / groups_;
  const long size = in_.size();
  for (int s = 0; s < batch; ++s) {
    float* mean = mean_.data() + s * groups_;
    float* rstd = rstd_.data() + s * groups_;
    sample_statistics(x + s * size, mean, rstd);
    for (int ch = 0; ch < in_.c; ++ch) {
      scale_[ch] = rstd[ch / cg] * gamma_[ch];
      shift_[ch] = beta_[ch] - mean[ch / cg] * scale_[ch];
    }
    const float* xs = x + s * size;
    float* ys = y + s * size;
    for (long i = 0; i < size; i += in_.c)
      for (int ch = 0; ch < in_.c; ++ch) ys[i + ch] = xs[i + ch] * scale_[ch] + shift_[ch];
  }
}

// With x̂ = (x − mean)·rstd and n values per group:
//   dbeta = Σ dy,  dgamma = Σ dy·x̂,
//   dx = rstd·(gamma·dy − mean_g(gamma·dy) − x̂·mean_g(gamma·dy·x̂)),
// written per channel as dx = dy·scale + x·slope + offset.
void GroupNorm::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  const int cg = in_.c / groups_;
  const long positions = static_cast<long>(in_.h) * in_.w, size = in_.size();
  const double n = static_cast<double>(positions) * cg;
  for (int ch = 0; ch < in_.c; ++ch) dgamma_[ch] = 0.f, dbeta_[ch] = 0.f;
  for (int s = 0; s < batch; ++s) {
    const float *xs = x + s * size, *dys = dy + s * size;
    const float *mean = mean_.data() + s * groups_, *rstd = rstd_.data() + s * groups_;
    channel_sums(dys, positions, in_.c, sums_.data(), [](float v, int) { return v; });  // Σ dy
    for (int ch = 0; ch < in_.c; ++ch) shift_[ch] = mean[ch / cg], scale_[ch] = rstd[ch / cg];
    for (int ch = 0; ch < in_.c; ++ch) extra_[ch] = 0.f;  // Σ dy·x̂
    for (long p = 0; p < positions; ++p)
      for (int ch = 0; ch < in_.c; ++ch)
        extra_[ch] += dys[p * in_.c + ch] * (xs[p * in_.c + ch] - shift_[ch]) * scale_[ch];
    for (int ch = 0; ch < in_.c; ++ch) dbeta_[ch] += sums_[ch], dgamma_[ch] += extra_[ch];
    if (!dx) continue;
    for (int g = 0; g < groups_; ++g) {
      double m1 = 0.0, m2 = 0.0;
      for (int ch = g * cg; ch < (g + 1) * cg; ++ch) m1 += gamma_[ch] * sums_[ch], m2 += gamma_[ch] * extra_[ch];
      const float r = rstd[g], a = static_cast<float>(m1 / n), b = static_cast<float>(m2 / n);
      for (int ch = g * cg; ch < (g + 1) * cg; ++ch) {
        scale_[ch] = r * gamma_[ch];
        extra_[ch] = -r * r * b;                     // slope on x
        sums_[ch] = -r * a + mean[g] * r * r * b;    // offset
      }
    }
    float* dxs = dx + s * size;
    for (long i = 0; i < size; i += in_.c)
      for (int ch = 0; ch < in_.c; ++ch) dxs[i + ch] = dys[i + ch] * scale_[ch] + xs[i + ch] * extra_[ch] + sums_[ch];
  }
}

}  // namespace starling
