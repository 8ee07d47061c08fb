#pragma once
// Element functions for the vectorized kernels: exp and the normal CDF and density written as
// branch-free float arithmetic (selects, a bit cast, no library call), so that a loop
// calling them vectorizes with whatever instruction set its file is compiled for.
//
// Internal linkage on purpose, as in ops_impl.h: the AVX-512 and baseline builds of these
// functions must never be merged by the linker.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace starling::kernels::vector_math {
namespace {

inline float bits_to_float(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// e^(hi + lo), within 2 ulp, for hi + lo in [-87, 88] (the caller's to keep) and lo small
/// against hi: Cephes' expf (n = round(x/ln 2), e^r on r = x − n·ln 2 by a degree-6
/// polynomial, times 2^n from the exponent bits), with hi − n·ln 2 formed before lo is
/// added. That subtraction is exact, so an exactly known hi (−a²/2 from a rounded to 12
/// bits) keeps its precision however large it is.
inline float exp_parts(float hi, float lo) {
  constexpr float kRound = 12582912.f;  // 1.5·2^23: adding it rounds to an integer
  const float n = ((hi + lo) * 1.44269504088896341f + kRound) - kRound;
  // ln 2 in two parts: n times the first is exact, and so is hi less it.
  const float r = ((hi - n * 0.693359375f) + lo) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = (p * r) * r + r + 1.f;
  return er * bits_to_float((static_cast<int32_t>(n) + 127) << 23);
}

/// e^x for x ≤ 88 (softmax arguments, x − max ≤ 0); below −87, about 2^-126 rather than a
/// denormal or 0. One select on x, so that a loop calling it stays one vector path.
inline float exp(float x) { return exp_parts(x < -87.f ? -87.f : x, 0.f); }

/// −a²/2 as hi + lo with hi exact: a's top 12 significant bits square exactly in float.
struct HalfSquare {
  float hi, lo;
};
inline HalfSquare minus_half_square(float a) {
  int32_t bits;
  std::memcpy(&bits, &a, sizeof bits);
  const float top = bits_to_float(bits & ~0xfff), rest = a - top;
  return {-0.5f * top * top, -(top * rest + 0.5f * rest * rest)};
}

constexpr float kInvSqrt2Pi = 0.39894228040143268f;

/// Φ(x) and φ(x), the standard normal CDF and density, from one exponential: with z = |x|/√2
/// and t = 1/(1 + z/2), erfc(z) = t·e^(−z²)·Q(t), Q a degree-10 Chebyshev fit of
/// erfc(z)·e^(z²)/t on t in [0, 1] (fit with mpmath; fractional error 8e-9, 1.4e-7 in float
/// Horner), and e^(−z²) = e^(−x²/2) taken exactly in the exponent (minus_half_square), which
/// is φ's too. Φ is erfc(z)/2 on the left and 1 minus it on the right: relative error near
/// 1e-7 on both tails, none of it from cancellation. |x| is taken at most 13, where
/// Φ(−13) = 6e-39 and φ(13) = 1e-37, below every value float arithmetic on activations
/// resolves, and e^(−x²/2) is still a normal float.
struct Normal {
  float cdf, pdf;
};
inline Normal normal(float x) {
  constexpr float kBound = 13.f;
  const float a = std::fabs(x) < kBound ? std::fabs(x) : kBound;
  const float t = 1.f / (1.f + 0.35355339059327376f * a);  // z/2 = a/(2√2)
  float q = 4.535133662e-02f;
  q = q * t - 2.455800363e-01f;
  q = q * t + 5.168995401e-01f;
  q = q * t - 4.824747605e-01f;
  q = q * t + 1.518851796e-01f;
  q = q * t - 6.795827531e-02f;
  q = q * t + 9.582719939e-02f;
  q = q * t + 1.749485963e-01f;
  q = q * t + 2.469135612e-01f;
  q = q * t + 2.820928673e-01f;
  q = q * t + 2.820947997e-01f;
  const HalfSquare e = minus_half_square(a);
  const float gauss = exp_parts(e.hi, e.lo);  // e^(−x²/2)
  const float half_tail = 0.5f * t * gauss * q;
  return {x < 0.f ? half_tail : 1.f - half_tail, kInvSqrt2Pi * gauss};
}

}  // namespace
}  // namespace starling::kernels::vector_math
