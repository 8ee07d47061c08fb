// Codec "fp8": 8-bit floats as OCP's MX formats send them (OCP Microscaling Formats v1.0,
// MXFP8 E4M3). Each block of 32 values shares a power-of-two scale 2^e, e = ⌊log2 max|x|⌋ − 8
// (clamped to [−127, 119]; 8 is the exponent of E4M3's largest normal, so an unclamped
// block's largest value lands in [256, 512)), and each value is sent as E4M3 of x / 2^e:
// 4 exponent bits (bias 7), 3 significand bits, subnormals, no infinities, rounded to nearest
// even and saturating at ±448. What the rounding and the saturation took stays in the
// residual. A block holding a NaN or an infinity gets scale byte 255 (NaN), which decoders
// refuse. Each value decodes on its own, so the codec rides the ring all-reduce.
// Payload body (8.25 bits per value):
//   ceil(n/32) × u8 scale, the biased exponent e + 127 (0..246) | n × u8 E4M3 code
//   (0x7F and 0xFF, E4M3's NaNs, invalid)
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "protocols/codec_row.h"
#include "protocols/codecs/payload.h"

namespace starling::protocols::codecs {
namespace {

constexpr CodecId kId{8};
constexpr std::size_t kBlock = 32;
constexpr int kMinExponent = -127, kMaxExponent = 127 - 8;  // E8M0's least; the most a float needs
constexpr std::uint8_t kNanScale = 255;

constexpr float power_of_two(int k) {
  float x = 1.0f;
  for (; k > 0; --k) x *= 2.0f;
  for (; k < 0; ++k) x /= 2.0f;
  return x;
}

// The value of every E4M3 code: significand · 2^-9 for exponent 0, else (8 + significand) ·
// 2^(exponent − 10). The NaNs read as 0: decode refuses them first.
constexpr std::array<float, 256> e4m3_values() {
  std::array<float, 256> v{};
  for (int c = 0; c < 256; ++c) {
    const int exponent = (c >> 3) & 15, significand = c & 7;
    const float x = exponent == 0 ? significand * power_of_two(-9) : (8 + significand) * power_of_two(exponent - 10);
    v[c] = (c & 0x80) ? -x : x;
  }
  v[0x7F] = v[0xFF] = 0.0f;
  return v;
}
constexpr std::array<float, 256> kValue = e4m3_values();

bool is_nan_code(std::uint8_t c) { return (c & 0x7F) == 0x7F; }

// E4M3 of a magnitude (finite, below 512 here), rounded to nearest even, saturating at 448.
std::uint8_t to_e4m3(float magnitude) {
  if (magnitude >= 448.0f) return 0x7E;
  if (magnitude < 0x1p-6f) {  // below E4M3's least normal: steps of 2^-9, the ulp of floats in [2^14, 2^15)
    const float rounded = (magnitude + 0x1p14f) - 0x1p14f;  // the float addition rounds to nearest even
    return static_cast<std::uint8_t>(rounded * 512.0f);     // 0..8 (8: the least normal, 2^-6)
  }
  std::uint32_t u;
  std::memcpy(&u, &magnitude, 4);
  u += 0x7FFFFu + ((u >> 20) & 1u);  // the 23-bit significand to 3 bits, to nearest even
  return static_cast<std::uint8_t>((u >> 20) - ((127u - 7u) << 3));  // rebias the exponent from 127 to 7
}

// One block: r += v, then the shared scale and the codes; r keeps what they miss.
std::uint8_t encode_block(const float* v, float* r, std::size_t n, std::uint8_t* codes) {
  float largest = 0.0f;
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] += v[i];
    finite = finite && std::isfinite(r[i]);
    largest = std::max(largest, std::fabs(r[i]));
  }
  if (!finite) {
    std::fill(codes, codes + n, std::uint8_t{0});
    return kNanScale;
  }
  const int e = largest == 0.0f ? kMinExponent : std::max(kMinExponent, std::ilogb(largest) - 8);
  const float inverse = std::ldexp(1.0f, -e);  // a normal float: −e is at most 127
  const float scale = std::ldexp(1.0f, e);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t sign = std::signbit(r[i]) ? 0x80 : 0;
    const std::uint8_t code = codes[i] = static_cast<std::uint8_t>(to_e4m3(std::fabs(r[i]) * inverse) | sign);
    r[i] -= kValue[code] * scale;  // exact: the code is within a factor 2 of r[i] / 2^e, or zero
  }
  return static_cast<std::uint8_t>(e + 127);
}

class Fp8Codec final : public Codec {
 public:
  CodecId id() const override { return kId; }

  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override {
    if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
    const std::size_t n = values.size(), blocks = (n + kBlock - 1) / kBlock;
    std::uint8_t* scales = start_payload(out, kId, 0, n, blocks + n);
    std::uint8_t* codes = scales + blocks;
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t begin = b * kBlock, len = std::min(kBlock, n - begin);
      scales[b] = encode_block(values.data() + begin, residual.data() + begin, len, codes + begin);
    }
    last_sent_ = n;
    return Error::ok;
  }

  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override {
    std::uint8_t format = 0;
    ByteSpan body;
    if (Error e = open_payload(payload, kId, out.size(), format, body); e != Error::ok) return e;
    if (format != 0) return Error::bad_parameter;
    const std::size_t n = out.size(), blocks = (n + kBlock - 1) / kBlock;
    if (body.size() < blocks + n) return Error::truncated;
    if (body.size() > blocks + n) return Error::oversized;
    const std::uint8_t* scales = body.data();
    const std::uint8_t* codes = scales + blocks;
    for (std::size_t b = 0; b < blocks; ++b) {
      if (scales[b] == kNanScale) return Error::non_finite;
      if (scales[b] > kMaxExponent + 127) return Error::bad_parameter;  // 448 · 2^e would overflow
    }
    if (std::any_of(codes, codes + n, is_nan_code)) return Error::non_finite;
    for (std::size_t b = 0; b < blocks; ++b) {
      const float scale = std::ldexp(1.0f, scales[b] - 127);
      const std::size_t begin = b * kBlock, end = std::min(n, begin + kBlock);
      for (std::size_t i = begin; i < end; ++i) {
        const float x = kValue[codes[i]] * scale;
        out[i] = apply == Apply::add ? out[i] + x : x;
      }
    }
    return Error::ok;
  }
};

constexpr CodecSample kSamples[] = {{"fp8", {}}};

}  // namespace

extern constexpr CodecRow fp8_codec_row{
    kId, "fp8", AllreduceRoute::ring, {}, nullptr,
    [](const CodecOptions&) -> std::unique_ptr<Codec> { return std::make_unique<Fp8Codec>(); }, nullptr, kSamples};

}  // namespace starling::protocols::codecs
