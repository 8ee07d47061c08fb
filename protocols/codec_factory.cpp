// Codec construction by id or name, with option checks (protocols/codec.h).
#include <cmath>

#include "protocols/codec.h"
#include "protocols/codecs/dense_codec.h"
#include "protocols/codecs/powersgd_codec.h"
#include "protocols/codecs/qsgd_codec.h"
#include "protocols/codecs/sign_codec.h"
#include "protocols/codecs/threshold_codec.h"
#include "protocols/codecs/topk_codec.h"

namespace starling::protocols {

Error validate_options(CodecId id, const CodecOptions& o) {
  switch (id) {
    case CodecId::threshold:
      if (!(o.density >= 0.0 && o.density <= 1.0) || !(o.tau > 0.0f) || !std::isfinite(o.tau) ||
          !(o.clip >= 0.0f) || !std::isfinite(o.clip))
        return Error::invalid_option;
      return Error::ok;
    case CodecId::topk:
      return o.density > 0.0 && o.density <= 1.0 && (o.value_bits == 32 || o.value_bits == 2) ? Error::ok
                                                                                             : Error::invalid_option;
    case CodecId::qsgd:
      if (o.bits < 2 || o.bits > 8 || o.bucket > codecs::QsgdCodec::kMaxBucket) return Error::invalid_option;
      return Error::ok;
    case CodecId::sign:
      return o.bucket % 8 == 0 && o.bucket <= codecs::SignCodec::kMaxBucket ? Error::ok : Error::invalid_option;
    case CodecId::powersgd:
      return o.rank >= 1 && o.rank <= static_cast<int>(codecs::PowerSgdCodec::kMaxRank) ? Error::ok
                                                                                         : Error::invalid_option;
    case CodecId::none:
    case CodecId::fp16:
    case CodecId::bf16: return Error::ok;
  }
  return Error::unknown_codec;
}

Result<std::unique_ptr<Codec>> make_codec(CodecId id, const CodecOptions& options) {
  if (!is_known_codec(static_cast<std::uint8_t>(id))) return Error::unknown_codec;
  if (Error e = validate_options(id, options); e != Error::ok) return e;
  std::unique_ptr<Codec> codec;
  switch (id) {
    case CodecId::none:
    case CodecId::fp16:
    case CodecId::bf16: codec = std::make_unique<codecs::DenseCodec>(id); break;
    case CodecId::threshold: codec = std::make_unique<codecs::ThresholdCodec>(options); break;
    case CodecId::topk: codec = std::make_unique<codecs::TopKCodec>(options); break;
    case CodecId::qsgd: codec = std::make_unique<codecs::QsgdCodec>(options); break;
    case CodecId::sign: codec = std::make_unique<codecs::SignCodec>(options); break;
    case CodecId::powersgd: codec = std::make_unique<codecs::PowerSgdCodec>(options); break;
  }
  return codec;
}

Result<std::unique_ptr<Codec>> make_codec(std::string_view name, const CodecOptions& options) {
  CodecId id;
  if (!parse_codec_name(name, id)) return Error::unknown_codec;
  return make_codec(id, options);
}

}  // namespace starling::protocols
