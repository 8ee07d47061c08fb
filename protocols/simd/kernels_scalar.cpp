// Portable codec kernels: the reference every vector path must match, and their tails.
#include <cmath>
#include <cstring>

#include "protocols/simd/scalar_kernels.h"

namespace starling::protocols::simd::scalar {
namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float load_f32(const std::uint8_t* p) {
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

std::uint16_t load_u16(const std::uint8_t* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

void store_u16(std::uint8_t* p, std::uint16_t h) { std::memcpy(p, &h, 2); }

float clamp(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

// Threshold step for one element; returns the code: +1, -1 or 0.
int threshold_one(const float* v, float* r, std::size_t i, float tau, float clip) {
  float t = r[i] + v[i];
  int code = 0;
  if (t >= tau) {
    t -= tau;
    code = 1;
  } else if (t <= -tau) {
    t += tau;
    code = -1;
  }
  if (clip > 0.0f) t = clamp(t, -clip, clip);
  r[i] = t;
  return code;
}

}  // namespace

std::uint16_t float_to_half(float f) {
  // Rounding to nearest even by integer arithmetic on normal results and by letting the FPU
  // round a float addition for subnormal ones.
  std::uint32_t u = bits_of(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7FFFFFFFu;
  std::uint16_t h;
  if (u >= 0x47800000u) {  // >= 65536: overflow, or NaN
    h = u > 0x7F800000u ? 0x7E00u : 0x7C00u;
  } else if (u < 0x38800000u) {  // below the smallest normal half (2^-14)
    const float magic = float_of(126u << 23);  // 0.5: aligns the half's subnormal ulp at bit 0
    h = static_cast<std::uint16_t>(bits_of(float_of(u) + magic) - (126u << 23));
  } else {
    const std::uint32_t odd = (u >> 13) & 1u;
    u += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xFFFu + odd;
    h = static_cast<std::uint16_t>(u >> 13);
  }
  return static_cast<std::uint16_t>(h | sign);
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  const std::uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    float mag = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
    return float_of(bits_of(mag) | sign);
  }
  if (exp == 31) return float_of(sign | 0x7F800000u | (mant << 13));
  return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = bits_of(f);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_to_float(std::uint16_t h) { return float_of(static_cast<std::uint32_t>(h) << 16); }

void f32_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float t = v[i] + r[i];
    std::memcpy(out + 4 * i, &t, 4);
    r[i] = 0.0f;
  }
}

void fp16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float t = v[i] + r[i];
    std::uint16_t h = float_to_half(clamp(t, -kHalfMax, kHalfMax));
    store_u16(out + 2 * i, h);
    r[i] = t - half_to_float(h);
  }
}

void bf16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float t = v[i] + r[i];
    std::uint16_t h = float_to_bf16(clamp(t, -kBf16Max, kBf16Max));
    store_u16(out + 2 * i, h);
    r[i] = t - bf16_to_float(h);
  }
}

bool f32_finite(const std::uint8_t* in, std::size_t n) {
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, in + 4 * i, 4);
    bad |= static_cast<std::uint32_t>((u & 0x7F800000u) == 0x7F800000u);
  }
  return bad == 0;
}

bool fp16_finite(const std::uint8_t* in, std::size_t n) {
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad |= static_cast<std::uint32_t>((load_u16(in + 2 * i) & 0x7C00u) == 0x7C00u);
  return bad == 0;
}

bool bf16_finite(const std::uint8_t* in, std::size_t n) {
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad |= static_cast<std::uint32_t>((load_u16(in + 2 * i) & 0x7F80u) == 0x7F80u);
  return bad == 0;
}

void f32_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  for (std::size_t i = 0; i < n; ++i) out[i] = (add ? out[i] : 0.0f) + load_f32(in + 4 * i);
}

void fp16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  for (std::size_t i = 0; i < n; ++i) out[i] = (add ? out[i] : 0.0f) + half_to_float(load_u16(in + 2 * i));
}

void bf16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  for (std::size_t i = 0; i < n; ++i) out[i] = (add ? out[i] : 0.0f) + bf16_to_float(load_u16(in + 2 * i));
}

std::size_t threshold_sparse(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::int32_t* out) {
  std::size_t count = 0;
  for (std::size_t i = begin; i < end; ++i) {
    int code = threshold_one(v, r, i, tau, clip);
    if (code != 0) out[count++] = code * static_cast<std::int32_t>(i + 1);
  }
  return count;
}

std::size_t threshold_bitmap(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::uint32_t* words) {
  std::size_t count = 0;
  for (std::size_t w = begin / 16; w * 16 < end; ++w) {
    std::uint32_t word = 0;
    for (std::size_t i = w * 16; i < end && i < w * 16 + 16; ++i) {
      int code = threshold_one(v, r, i, tau, clip);
      if (code != 0) {
        word |= (code > 0 ? 1u : 2u) << (2 * (i % 16));
        ++count;
      }
    }
    words[w] = word;
  }
  return count;
}

std::int64_t bitmap_check(const std::uint8_t* words, std::size_t n) {
  std::int64_t count = 0;
  const std::size_t nwords = (n + 15) / 16;
  for (std::size_t w = 0; w < nwords; ++w) {
    std::uint32_t word;
    std::memcpy(&word, words + 4 * w, 4);
    if (word & (word >> 1) & 0x55555555u) return -1;
    const std::size_t valid = n - w * 16 < 16 ? n - w * 16 : 16;
    if (valid < 16 && (word >> (2 * valid)) != 0) return -1;
    count += __builtin_popcount(word);
  }
  return count;
}

void bitmap_decode(const std::uint8_t* words, std::size_t n, float tau, float* out, bool add) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t word;
    std::memcpy(&word, words + 4 * (i / 16), 4);
    const std::uint32_t code = (word >> (2 * (i % 16))) & 3u;
    const float value = code == 1u ? tau : (code == 2u ? -tau : 0.0f);
    out[i] = (add ? out[i] : 0.0f) + value;
  }
}

std::size_t select_abs_ge(const float* v, float* r, std::size_t begin, std::size_t end, float t,
                          std::uint32_t* idx, float* val) {
  std::size_t count = 0;
  for (std::size_t i = begin; i < end; ++i) {
    float x = r[i] + v[i];
    if (std::fabs(x) >= t) {
      idx[count] = static_cast<std::uint32_t>(i);
      val[count++] = x;
      x = 0.0f;
    }
    r[i] = x;
  }
  return count;
}

float add_absmax(const float* v, float* r, std::size_t n) {
  float m = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] += v[i];
    m = std::fmax(m, std::fabs(r[i]));
  }
  return m;
}

void qsgd_quantize(float* r, std::size_t n, float scale, int levels, std::uint32_t key, std::uint32_t base,
                   std::int8_t* q) {
  const float inv = scale > 0.0f ? static_cast<float>(levels) / scale : 0.0f;
  const float step = scale / static_cast<float>(levels);
  for (std::size_t i = 0; i < n; ++i) {
    const float u = static_cast<float>(qsgd_hash(key, base + static_cast<std::uint32_t>(i)) >> 8) * 5.9604645e-8f;
    const float x = std::fabs(r[i]) * inv + u;
    int level = static_cast<int>(x);
    if (level > levels) level = levels;
    if (r[i] < 0.0f) level = -level;
    q[i] = static_cast<std::int8_t>(level);
    r[i] -= static_cast<float>(level) * step;
  }
}

bool qsgd_valid(const std::int8_t* q, std::size_t n, int levels) {
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) ok &= (q[i] >= -levels) & (q[i] <= levels);
  return ok;
}

void qsgd_dequant(const std::int8_t* q, std::size_t n, float step, float* out, bool add) {
  for (std::size_t i = 0; i < n; ++i) out[i] = (add ? out[i] : 0.0f) + static_cast<float>(q[i]) * step;
}

float add_abssum(const float* v, float* r, std::size_t n) {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] += v[i];
    s += std::fabs(r[i]);
  }
  return s;
}

void sign_encode(float* r, std::size_t n, float scale, std::uint8_t* bits) {
  for (std::size_t i = 0; i < n; i += 8) {
    std::uint8_t byte = 0;
    for (std::size_t j = i; j < n && j < i + 8; ++j) {
      const bool negative = r[j] < 0.0f;
      byte |= static_cast<std::uint8_t>(negative) << (j - i);
      r[j] -= negative ? -scale : scale;
    }
    bits[i / 8] = byte;
  }
}

void sign_decode(const std::uint8_t* bits, std::size_t n, float scale, float* out, bool add) {
  for (std::size_t i = 0; i < n; ++i) {
    const bool negative = (bits[i / 8] >> (i % 8)) & 1u;
    out[i] = (add ? out[i] : 0.0f) + (negative ? -scale : scale);
  }
}

}  // namespace starling::protocols::simd::scalar
