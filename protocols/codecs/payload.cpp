// Shared codec payload prefix and argument checks (protocols/codecs/payload.h).
#include "protocols/codecs/payload.h"

#include <cmath>

#include "protocols/byte_io.h"

namespace starling::protocols::codecs {

std::uint8_t* start_payload(std::vector<std::uint8_t>& out, CodecId id, std::uint8_t format,
                            std::size_t count, std::size_t body) {
  out.resize(kPrefixSize + body);
  std::uint8_t* p = out.data();
  p[0] = static_cast<std::uint8_t>(id);
  p[1] = format;
  store_le<std::uint16_t>(p + 2, 0);
  store_le<std::uint32_t>(p + 4, static_cast<std::uint32_t>(count));
  return p + kPrefixSize;
}

Error open_payload(ByteSpan payload, CodecId id, std::size_t count, std::uint8_t& format, ByteSpan& body) {
  if (payload.size() < kPrefixSize) return Error::truncated;
  const std::uint8_t* p = payload.data();
  if (!is_known_codec(p[0])) return Error::unknown_codec;
  if (p[0] != static_cast<std::uint8_t>(id)) return Error::codec_mismatch;
  if (load_le<std::uint16_t>(p + 2) != 0) return Error::bad_header;
  if (load_le<std::uint32_t>(p + 4) != count) return Error::length_mismatch;
  format = p[1];
  body = payload.subspan(kPrefixSize);
  return Error::ok;
}

Error check_encode_args(Span<const float> values, Span<float> residual) {
  if (values.size() != residual.size() || values.size() > kMaxElements) return Error::invalid_option;
  return Error::ok;
}

Error check_scale(float scale) {
  if (!std::isfinite(scale)) return Error::non_finite;
  if (scale < 0.0f) return Error::bad_parameter;
  return Error::ok;
}

}  // namespace starling::protocols::codecs
