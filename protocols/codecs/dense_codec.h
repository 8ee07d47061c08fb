#pragma once
// The dense baselines: fp32 ("none", lossless, residual becomes zero), fp16 and bf16
// (round to nearest even, saturating at the format's largest finite value; the rounding
// error stays in the residual). Payload body: n values of 4 or 2 bytes, little-endian.
#include "protocols/codec.h"

namespace starling::protocols::codecs {

class DenseCodec final : public Codec {
 public:
  /// id is none, fp16 or bf16.
  explicit DenseCodec(CodecId id) : id_(id) {}
  CodecId id() const override { return id_; }
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;

 private:
  std::size_t width() const { return id_ == CodecId::none ? 4 : 2; }
  CodecId id_;
};

}  // namespace starling::protocols::codecs
