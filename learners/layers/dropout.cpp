#include "learners/layers/dropout.h"

#include <cstring>
#include <stdexcept>

namespace starling {
namespace {

// SplitMix64's finaliser: a well-mixed 64-bit value from a counter.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

Dropout::Dropout(Shape in, double rate, uint64_t salt) : in_(in), rate_(rate), salt_(salt) {
  if (!(rate >= 0.0 && rate < 1.0)) throw std::invalid_argument("dropout: rate must be in [0, 1)");
}

std::string Dropout::name() const { return "dropout(" + std::to_string(rate_) + ")"; }

void Dropout::apply(long n, const float* v, float* out) const {
  const uint64_t threshold = static_cast<uint64_t>(rate_ * 18446744073709551616.0);  // rate · 2^64
  const float scale = static_cast<float>(1.0 / (1.0 - rate_));
  const uint64_t base = mix(key_ ^ mix(salt_ + 0x9e3779b97f4a7c15ull));
  for (long i = 0; i < n; ++i) out[i] = mix(base + static_cast<uint64_t>(i)) >= threshold ? v[i] * scale : 0.f;
}

void Dropout::forward(kernels::Backend, int batch, const float* x, float* y) {
  const long n = batch * in_.size();
  if (!training_ || rate_ == 0.0) std::memcpy(y, x, sizeof(float) * static_cast<std::size_t>(n));
  else apply(n, x, y);
}

void Dropout::backward(kernels::Backend, int batch, const float*, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const long n = batch * in_.size();
  if (!training_ || rate_ == 0.0) std::memcpy(dx, dy, sizeof(float) * static_cast<std::size_t>(n));
  else apply(n, dy, dx);
}

}  // namespace starling
