// Scaled-sign codec (protocols/codecs/sign_codec.h).
#include "protocols/codecs/sign_codec.h"

#include <algorithm>

#include "protocols/byte_io.h"
#include "protocols/codec_row.h"
#include "protocols/codecs/payload.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::codecs {
namespace {

constexpr CodecParam kParams[] = {
    {"bucket", 0, 0, SignCodec::kMaxBucket, true, false, true, "entries per scale, a multiple of 8 (0: 2048)"},
};
constexpr const CodecParam& kBucket = kParams[0];

}  // namespace

SignCodec::SignCodec(const CodecOptions& options)
    : bucket_(kBucket.of(options) > 0 ? static_cast<std::uint32_t>(kBucket.of(options)) : kDefaultBucket) {}

Error SignCodec::encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) {
  if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
  const std::size_t n = values.size(), buckets = (n + bucket_ - 1) / bucket_;
  std::uint8_t* body = start_payload(out, id(), 0, n, 4 + 4 * buckets + (n + 7) / 8);
  store_le<std::uint32_t>(body, bucket_);
  std::uint8_t* scales = body + 4;
  std::uint8_t* bits = scales + 4 * buckets;
  const simd::CodecKernels& k = simd::codec_kernels();
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = b * bucket_, len = std::min<std::size_t>(bucket_, n - begin);
    const float scale = k.add_abssum(values.data() + begin, residual.data() + begin, len) / static_cast<float>(len);
    store_le<float>(scales + 4 * b, scale);
    k.sign_encode(residual.data() + begin, len, scale, bits + begin / 8);
  }
  last_sent_ = n;
  return Error::ok;
}

Error SignCodec::decode(ByteSpan payload, Span<float> out, Apply apply) const {
  std::uint8_t format = 0;
  ByteSpan body;
  if (Error e = open_payload(payload, id(), out.size(), format, body); e != Error::ok) return e;
  if (format != 0) return Error::bad_parameter;
  ByteReader reader(body);
  const std::uint32_t bucket = reader.read<std::uint32_t>();
  if (!reader.ok()) return Error::truncated;
  if (bucket == 0 || bucket % 8 != 0 || bucket > kMaxBucket) return Error::bad_parameter;
  const std::size_t n = out.size(), buckets = (n + bucket - 1) / bucket;
  const std::size_t need = 4 * buckets + (n + 7) / 8;
  if (reader.remaining() < need) return Error::truncated;
  if (reader.remaining() > need) return Error::oversized;
  const std::uint8_t* scales = body.data() + 4;
  const std::uint8_t* bits = scales + 4 * buckets;
  for (std::size_t b = 0; b < buckets; ++b)
    if (Error e = check_scale(load_le<float>(scales + 4 * b)); e != Error::ok) return e;
  if (n % 8 != 0 && (bits[n / 8] >> (n % 8)) != 0) return Error::bad_encoding;
  const simd::CodecKernels& k = simd::codec_kernels();
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = b * bucket, len = std::min<std::size_t>(bucket, n - begin);
    k.sign_decode(bits + begin / 8, len, load_le<float>(scales + 4 * b), out.data() + begin, apply == Apply::add);
  }
  return Error::ok;
}


namespace {

constexpr std::pair<std::string_view, double> kSmallBuckets[] = {{"bucket", 64}};
constexpr CodecSample kSamples[] = {{"sign", {}}, {"sign64", kSmallBuckets}};

std::optional<OptionProblem> check(const CodecOptions& o) {
  if (static_cast<std::uint32_t>(kBucket.of(o)) % 8 != 0) return OptionProblem{kBucket.name, "expected a multiple of 8"};
  return std::nullopt;
}

}  // namespace

extern constexpr CodecRow sign_codec_row{
    SignCodec::kId, "sign", AllreduceRoute::gather, kParams, check,
    [](const CodecOptions& o) -> std::unique_ptr<Codec> { return std::make_unique<SignCodec>(o); }, nullptr,
    kSamples};

}  // namespace starling::protocols::codecs
