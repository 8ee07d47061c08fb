// QSGD codec (protocols/codecs/qsgd_codec.h).
#include "protocols/codecs/qsgd_codec.h"

#include <algorithm>
#include <string>

#include "protocols/byte_io.h"
#include "protocols/codec_row.h"
#include "protocols/codecs/payload.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::codecs {
namespace {

constexpr CodecParam kParams[] = {
    {"bits", 8, 2, 8, true, false, true, "bits per entry (2^(bits-1) - 1 levels either side of zero)"},
    {"bucket", 0, 0, QsgdCodec::kMaxBucket, true, false, true, "entries per scale (0: 512)"},
};
constexpr const CodecParam &kBits = kParams[0], &kBucket = kParams[1];

int levels_for(int bits) { return (1 << (bits - 1)) - 1; }

std::size_t packed_bytes(std::size_t n, int bits) { return (n * static_cast<std::size_t>(bits) + 7) / 8; }

void pack(const std::int8_t* q, std::size_t n, int bits, std::uint8_t* out) {
  const std::uint32_t mask = (1u << bits) - 1u;
  std::uint32_t acc = 0;
  int filled = 0;
  for (std::size_t i = 0; i < n; ++i) {
    acc |= (static_cast<std::uint32_t>(q[i]) & mask) << filled;
    filled += bits;
    for (; filled >= 8; filled -= 8, acc >>= 8) *out++ = static_cast<std::uint8_t>(acc);
  }
  if (filled > 0) *out = static_cast<std::uint8_t>(acc);
}

// Unpacks and sign-extends; false if the padding bits of the last byte are not zero.
bool unpack(const std::uint8_t* in, std::size_t n, int bits, std::int8_t* q) {
  const std::uint32_t mask = (1u << bits) - 1u, sign = 1u << (bits - 1);
  std::uint32_t acc = 0;
  int filled = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (filled < bits) {
      acc |= static_cast<std::uint32_t>(*in++) << filled;
      filled += 8;
    }
    const std::uint32_t field = acc & mask;
    acc >>= bits;
    filled -= bits;
    q[i] = static_cast<std::int8_t>(static_cast<int>(field) - static_cast<int>((field & sign) << 1));
  }
  return acc == 0;
}

}  // namespace

QsgdCodec::QsgdCodec(const CodecOptions& options)
    : bits_(static_cast<int>(kBits.of(options))),
      bucket_(kBucket.of(options) > 0 ? static_cast<std::uint32_t>(kBucket.of(options)) : kDefaultBucket),
      seed_(options.seed) {}

Error QsgdCodec::encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) {
  if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
  const std::size_t n = values.size();
  const std::size_t buckets = (n + bucket_ - 1) / bucket_;
  std::uint8_t* body = start_payload(out, id(), static_cast<std::uint8_t>(bits_), n,
                                     4 + 4 * buckets + packed_bytes(n, bits_));
  store_le<std::uint32_t>(body, bucket_);
  std::uint8_t* scales = body + 4;
  std::uint8_t* packed = scales + 4 * buckets;
  if (bits_ < 8) levels_.resize(n);
  std::int8_t* q = bits_ == 8 ? reinterpret_cast<std::int8_t*>(packed) : levels_.data();
  const std::uint32_t key = simd::qsgd_hash(static_cast<std::uint32_t>(seed_ ^ (seed_ >> 32)), round_++);
  const simd::CodecKernels& k = simd::codec_kernels();
  const int s = levels_for(bits_);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = b * bucket_, len = std::min<std::size_t>(bucket_, n - begin);
    const float scale = k.add_absmax(values.data() + begin, residual.data() + begin, len);
    store_le<float>(scales + 4 * b, scale);
    k.qsgd_quantize(residual.data() + begin, len, scale, s, key, static_cast<std::uint32_t>(begin), q + begin);
  }
  if (bits_ < 8) pack(q, n, bits_, packed);
  last_sent_ = n;
  return Error::ok;
}

Error QsgdCodec::decode(ByteSpan payload, Span<float> out, Apply apply) const {
  std::uint8_t format = 0;
  ByteSpan body;
  if (Error e = open_payload(payload, id(), out.size(), format, body); e != Error::ok) return e;
  const int bits = format;
  if (bits < 2 || bits > 8) return Error::bad_parameter;
  ByteReader reader(body);
  const std::uint32_t bucket = reader.read<std::uint32_t>();
  if (!reader.ok()) return Error::truncated;
  if (bucket == 0 || bucket > kMaxBucket) return Error::bad_parameter;
  const std::size_t n = out.size(), buckets = (n + bucket - 1) / bucket;
  const std::size_t need = 4 * buckets + packed_bytes(n, bits);
  if (reader.remaining() < need) return Error::truncated;
  if (reader.remaining() > need) return Error::oversized;
  const std::uint8_t* scales = body.data() + 4;
  const std::uint8_t* packed = scales + 4 * buckets;
  for (std::size_t b = 0; b < buckets; ++b)
    if (Error e = check_scale(load_le<float>(scales + 4 * b)); e != Error::ok) return e;
  const simd::CodecKernels& k = simd::codec_kernels();
  const int s = levels_for(bits);
  std::vector<std::int8_t> unpacked;
  const std::int8_t* q = reinterpret_cast<const std::int8_t*>(packed);
  if (bits < 8) {
    unpacked.resize(n);
    if (!unpack(packed, n, bits, unpacked.data())) return Error::bad_encoding;
    q = unpacked.data();
  }
  if (!k.qsgd_valid(q, n, s)) return Error::bad_encoding;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = b * bucket, len = std::min<std::size_t>(bucket, n - begin);
    const float step = load_le<float>(scales + 4 * b) / static_cast<float>(s);
    k.qsgd_dequant(q + begin, len, step, out.data() + begin, apply == Apply::add);
  }
  return Error::ok;
}


namespace {

constexpr std::pair<std::string_view, double> kFour[] = {{"bits", 4}};
constexpr std::pair<std::string_view, double> kThree[] = {{"bits", 3}, {"bucket", 64}};
constexpr CodecSample kSamples[] = {{"qsgd8", {}}, {"qsgd4", kFour}, {"qsgd3", kThree}};

}  // namespace

extern constexpr CodecRow qsgd_codec_row{
    QsgdCodec::kId, "qsgd", AllreduceRoute::ring, kParams, nullptr,
    [](const CodecOptions& o) -> std::unique_ptr<Codec> { return std::make_unique<QsgdCodec>(o); },
    [](const CodecOptions& o) { return "qsgd " + std::to_string(static_cast<int>(kBits.of(o))) + "-bit"; }, kSamples};

}  // namespace starling::protocols::codecs
