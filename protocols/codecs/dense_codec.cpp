// The dense codecs' encode and decode (protocols/codecs/dense_codec.h).
#include "protocols/codecs/dense_codec.h"

#include "protocols/codecs/payload.h"

namespace starling::protocols::codecs {

Error DenseCodec::encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) {
  if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
  const std::size_t n = values.size();
  std::uint8_t* body = start_payload(out, format_.id, 0, n, n * format_.width);
  (simd::codec_kernels().*format_.encode)(values.data(), residual.data(), body, n);
  last_sent_ = n;
  return Error::ok;
}

Error DenseCodec::decode(ByteSpan payload, Span<float> out, Apply apply) const {
  std::uint8_t format = 0;
  ByteSpan body;
  if (Error e = open_payload(payload, format_.id, out.size(), format, body); e != Error::ok) return e;
  if (format != 0) return Error::bad_parameter;
  const std::size_t n = out.size();
  if (body.size() < n * format_.width) return Error::truncated;
  if (body.size() > n * format_.width) return Error::oversized;
  const simd::CodecKernels& k = simd::codec_kernels();
  if (!(k.*format_.finite)(body.data(), n)) return Error::non_finite;
  (k.*format_.decode)(body.data(), out.data(), n, apply == Apply::add);
  return Error::ok;
}

}  // namespace starling::protocols::codecs
