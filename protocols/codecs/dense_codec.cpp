// fp32 / fp16 / bf16 codecs (protocols/codecs/dense_codec.h).
#include "protocols/codecs/dense_codec.h"

#include "protocols/codecs/payload.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::codecs {

Error DenseCodec::encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) {
  if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
  const std::size_t n = values.size();
  std::uint8_t* body = start_payload(out, id_, 0, n, n * width());
  const simd::CodecKernels& k = simd::codec_kernels();
  auto encode = id_ == CodecId::none ? k.f32_encode : (id_ == CodecId::fp16 ? k.fp16_encode : k.bf16_encode);
  encode(values.data(), residual.data(), body, n);
  last_sent_ = n;
  return Error::ok;
}

Error DenseCodec::decode(ByteSpan payload, Span<float> out, Apply apply) const {
  std::uint8_t format = 0;
  ByteSpan body;
  if (Error e = open_payload(payload, id_, out.size(), format, body); e != Error::ok) return e;
  if (format != 0) return Error::bad_parameter;
  const std::size_t n = out.size();
  if (body.size() < n * width()) return Error::truncated;
  if (body.size() > n * width()) return Error::oversized;
  const simd::CodecKernels& k = simd::codec_kernels();
  auto finite = id_ == CodecId::none ? k.f32_finite : (id_ == CodecId::fp16 ? k.fp16_finite : k.bf16_finite);
  if (!finite(body.data(), n)) return Error::non_finite;
  auto decode = id_ == CodecId::none ? k.f32_decode : (id_ == CodecId::fp16 ? k.fp16_decode : k.bf16_decode);
  decode(body.data(), out.data(), n, apply == Apply::add);
  return Error::ok;
}

}  // namespace starling::protocols::codecs
