#pragma once
// Bodies of the group-normalisation kernels (ops.h), plain loops over a sample's positions
// with the channels innermost, compiled into each ISA file like ops_impl.h. Sums over
// positions take four positions per pass over the per-channel accumulators, so the loads
// and stores of those accumulators do not bound the loop. Statistics are two-pass (the mean,
// then squared deviations from it): accurate where the mean is large against the spread.
//
// Internal linkage on purpose, as in ops_impl.h.
#include "kernels/ops.h"

#include <cmath>

namespace starling::kernels::ops_detail {
namespace {

struct NormScratch {
  float *a, *b, *c;  // per channel
  NormScratch(float* s, int channels) : a(s), b(s + channels), c(s + 2 * static_cast<long>(channels)) {}
};

// out[ch] = Σ over positions of (x[p, ch] − m[ch])², or of x[p, ch] when m is null.
template <bool kCentered>
void position_sums(long positions, int channels, const float* x, const float* __restrict m, float* __restrict out) {
  for (int j = 0; j < channels; ++j) out[j] = 0.f;
  auto term = [m](float v, int j) {
    if constexpr (kCentered) return (v - m[j]) * (v - m[j]);
    else return v;
  };
  long p = 0;
  for (; p + 4 <= positions; p += 4) {
    const float* __restrict r0 = x + p * channels;
    const float* __restrict r1 = r0 + channels;
    const float* __restrict r2 = r1 + channels;
    const float* __restrict r3 = r2 + channels;
    for (int j = 0; j < channels; ++j) out[j] += (term(r0[j], j) + term(r1[j], j)) + (term(r2[j], j) + term(r3[j], j));
  }
  for (; p < positions; ++p)
    for (int j = 0; j < channels; ++j) out[j] += term(x[p * channels + j], j);
}

// Per-group mean of per-channel sums over n values a group.
inline void group_means(const NormShape& s, const float* sums, double n, float* out) {
  const int cg = s.channels / s.groups;
  for (int g = 0; g < s.groups; ++g) {
    double total = 0.0;
    for (int j = g * cg; j < (g + 1) * cg; ++j) total += sums[j];
    out[g] = static_cast<float>(total / n);
  }
}

// One sample's mean and rstd per group; leaves the per-channel mean in `centre`.
inline void sample_statistics(const NormShape& s, const float* x, float* mean, float* rstd, float* sums, float* centre) {
  const int cg = s.channels / s.groups;
  const double n = static_cast<double>(s.positions) * cg;
  position_sums<false>(s.positions, s.channels, x, nullptr, sums);
  group_means(s, sums, n, mean);
  for (int j = 0; j < s.channels; ++j) centre[j] = mean[j / cg];
  position_sums<true>(s.positions, s.channels, x, centre, sums);
  group_means(s, sums, n, rstd);
  for (int g = 0; g < s.groups; ++g) rstd[g] = 1.f / std::sqrt(rstd[g] + kGroupNormEpsilon);
}

// y = x·scale[ch] + shift[ch] (then ReLU) over one sample.
template <bool kRelu>
void affine(long positions, int channels, const float* __restrict x, const float* __restrict scale,
            const float* __restrict shift, float* __restrict y) {
  for (long p = 0; p < positions; ++p, x += channels, y += channels)
    for (int j = 0; j < channels; ++j) {
      const float v = x[j] * scale[j] + shift[j];
      y[j] = kRelu ? (v > 0.f ? v : 0.f) : v;
    }
}

inline void groupnorm_forward(const NormShape& s, const float* x, const float* gamma, const float* beta, bool relu,
                              float* y, float* mean, float* rstd, float* scratch) {
  const NormScratch t(scratch, s.channels);
  const int cg = s.channels / s.groups;
  const long size = s.positions * s.channels;
  for (int n = 0; n < s.batch; ++n, x += size, y += size, mean += s.groups, rstd += s.groups) {
    sample_statistics(s, x, mean, rstd, t.a, t.b);
    for (int j = 0; j < s.channels; ++j) {
      t.a[j] = rstd[j / cg] * gamma[j];
      t.b[j] = beta[j] - mean[j / cg] * t.a[j];
    }
    if (relu) affine<true>(s.positions, s.channels, x, t.a, t.b, y);
    else affine<false>(s.positions, s.channels, x, t.a, t.b, y);
  }
}

// sdy[ch] = Σ dy', sdx[ch] = Σ dy'·(x − m[ch]) over one sample, dy' = dy masked by y > 0
// when kRelu.
template <bool kRelu>
void gradient_sums(long positions, int channels, const float* __restrict x, const float* __restrict y,
                   const float* __restrict dy, const float* __restrict m, float* __restrict sdy, float* __restrict sdx) {
  for (int j = 0; j < channels; ++j) sdy[j] = 0.f, sdx[j] = 0.f;
  for (long p = 0; p < positions; ++p, x += channels, dy += channels, y += kRelu ? channels : 0)
    for (int j = 0; j < channels; ++j) {
      const float g = kRelu ? (y[j] > 0.f ? dy[j] : 0.f) : dy[j];
      sdy[j] += g;
      sdx[j] += g * (x[j] - m[j]);
    }
}

// dx = dy'·scale[ch] + x·slope[ch] + offset[ch] over one sample.
template <bool kRelu>
void input_gradient(long positions, int channels, const float* __restrict x, const float* __restrict y,
                    const float* __restrict dy, const float* __restrict scale, const float* __restrict slope,
                    const float* __restrict offset, float* __restrict dx) {
  for (long p = 0; p < positions; ++p, x += channels, dy += channels, dx += channels, y += kRelu ? channels : 0)
    for (int j = 0; j < channels; ++j) {
      const float g = kRelu ? (y[j] > 0.f ? dy[j] : 0.f) : dy[j];
      dx[j] = g * scale[j] + x[j] * slope[j] + offset[j];
    }
}

// With x̂ = (x − mean)·rstd and n values a group, per sample:
//   dbeta += Σ dy,  dgamma += Σ dy·x̂,
//   dx = rstd·(gamma·dy − mean_g(gamma·dy) − x̂·mean_g(gamma·dy·x̂)),
// written per channel as dx = dy·scale + x·slope + offset.
inline void groupnorm_sample_dx(const NormShape& s, const float* gamma, float mean, float rstd, int g,
                                const float* sdy, const float* sdx, NormScratch t) {
  const int cg = s.channels / s.groups;
  const double n = static_cast<double>(s.positions) * cg;
  double m1 = 0.0, m2 = 0.0;
  for (int j = g * cg; j < (g + 1) * cg; ++j) m1 += gamma[j] * sdy[j], m2 += gamma[j] * sdx[j] * rstd;
  const float a = static_cast<float>(m1 / n), b = static_cast<float>(m2 / n);
  for (int j = g * cg; j < (g + 1) * cg; ++j) {
    t.a[j] = rstd * gamma[j];                     // scale
    t.b[j] = -rstd * rstd * b;                    // slope on x
    t.c[j] = -rstd * a + mean * rstd * rstd * b;  // offset
  }
}

template <bool kRelu>
void groupnorm_backward_impl(const NormShape& s, const float* x, const float* y, const float* dy, const float* gamma,
                             const float* mean, const float* rstd, float* dgamma, float* dbeta, float* dx,
                             float* scratch) {
  const NormScratch t(scratch, s.channels);
  float* centre = t.c;
  const int cg = s.channels / s.groups;
  const long size = s.positions * s.channels;
  for (int j = 0; j < s.channels; ++j) dgamma[j] = 0.f, dbeta[j] = 0.f;
  for (int n = 0; n < s.batch; ++n, mean += s.groups, rstd += s.groups) {
    const long o = n * size;
    const float* yn = kRelu ? y + o : nullptr;
    for (int j = 0; j < s.channels; ++j) centre[j] = mean[j / cg];
    gradient_sums<kRelu>(s.positions, s.channels, x + o, yn, dy + o, centre, t.a, t.b);
    for (int j = 0; j < s.channels; ++j) dbeta[j] += t.a[j], dgamma[j] += t.b[j] * rstd[j / cg];
    if (!dx) continue;
    // t.a and t.b become scale and slope group by group; a group's sums are read before its
    // channels are overwritten.
    for (int g = 0; g < s.groups; ++g) groupnorm_sample_dx(s, gamma, mean[g], rstd[g], g, t.a, t.b, t);
    input_gradient<kRelu>(s.positions, s.channels, x + o, yn, dy + o, t.a, t.b, t.c, dx + o);
  }
}

inline void groupnorm_backward(const NormShape& s, const float* x, const float* y, const float* dy,
                               const float* gamma, const float* mean, const float* rstd, float* dgamma,
                               float* dbeta, float* dx, float* scratch) {
  if (y) groupnorm_backward_impl<true>(s, x, y, dy, gamma, mean, rstd, dgamma, dbeta, dx, scratch);
  else groupnorm_backward_impl<false>(s, x, y, dy, gamma, mean, rstd, dgamma, dbeta, dx, scratch);
}

}  // namespace
}  // namespace starling::kernels::ops_detail
