#pragma once
// Scaled sign compression (1-bit SGD, Seide 2014; EF-signSGD, Karimireddy 2019): one bit
// per entry and, per bucket, scale = mean |values + residual|; the decoded value is
// ±scale and the difference stays in the residual. Payload body:
//   +0 u32 bucket (a multiple of 8) | ceil(n/bucket) × f32 scale |
//   ceil(n/8) bytes of sign bits, LSB-first, 1 = negative, padding bits zero
#include <cstdint>
#include <vector>

#include "protocols/codec.h"

namespace starling::protocols::codecs {

class SignCodec final : public Codec {
 public:
  explicit SignCodec(const CodecOptions& options);
  static constexpr CodecId kId{6};
  CodecId id() const override { return kId; }
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;

  /// Small enough that a bucket's residual stays in L1 between the two passes.
  static constexpr std::uint32_t kDefaultBucket = 2048;
  static constexpr std::uint32_t kMaxBucket = 1u << 24;

 private:
  std::uint32_t bucket_;
};

}  // namespace starling::protocols::codecs
