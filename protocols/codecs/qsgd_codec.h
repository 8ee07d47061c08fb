#pragma once
// QSGD (Alistarh et al. 2017) with s = 2^(bits-1) - 1 levels per sign: each bucket of
// entries is scaled by its largest magnitude (the max-norm variant, lower variance than
// the 2-norm) and every entry is rounded stochastically to a neighbouring level, so the
// decoded value is unbiased. Rounding draws come from a hash of (seed, round, index), so
// every ISA path produces the same bytes. Payload body (format byte = bits):
//   +0 u32 bucket | ceil(n/bucket) × f32 scale | levels: n × bits-bit two's complement,
//   LSB-first, in [-s, s], padding bits zero
#include <cstdint>
#include <vector>

#include "protocols/codec.h"

namespace starling::protocols::codecs {

class QsgdCodec final : public Codec {
 public:
  explicit QsgdCodec(const CodecOptions& options);
  static constexpr CodecId kId{5};
  CodecId id() const override { return kId; }
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;
  std::uint64_t draws() const override { return round_; }
  void set_draws(std::uint64_t draws) override { round_ = static_cast<std::uint32_t>(draws); }

  static constexpr std::uint32_t kDefaultBucket = 512;
  static constexpr std::uint32_t kMaxBucket = 1u << 24;

 private:
  int bits_;
  std::uint32_t bucket_;
  std::uint64_t seed_;
  std::uint32_t round_ = 0;
  std::vector<std::int8_t> levels_;  // unpacked levels when bits < 8
};

}  // namespace starling::protocols::codecs
