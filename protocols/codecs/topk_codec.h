#pragma once
// Top-k sparsification with error feedback (DGC, Lin et al. 2018): sends about
// k = ceil(density·n) entries of largest |values + residual| with their exact values and
// zeroes them in the residual. The cut-off is estimated from a random sample of the
// entries (sorting everything is far too slow), then trimmed to exactly k if the sample
// let too many through. Payload body, format 0 (value_bits 32):
//   +0 u32 count | count × u32 index (strictly increasing) | count × f32 value
// Format 2 (value_bits 2, SparseLoCo, Sarfi et al. 2025): each value sent as its sign and
// one of two magnitudes, the means of the sent magnitudes at most and above the midpoint of
// their range; what that rounding changed stays in the residual with what was not sent:
//   +0 u32 count | count × u32 index | f32 low | f32 high | ceil(count/4) bytes of 2-bit
//   codes, LSB first (bit 0: negative, bit 1: high), padding bits zero
#include <cstdint>
#include <vector>

#include "protocols/codec.h"

namespace starling::protocols::codecs {

class TopKCodec final : public Codec {
 public:
  explicit TopKCodec(const CodecOptions& options);
  static constexpr CodecId kId{4};
  CodecId id() const override { return kId; }
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;
  std::uint64_t draws() const override { return rng_; }
  void set_draws(std::uint64_t draws) override { rng_ = draws | 1u; }  // xorshift's state is never 0

 private:
  float estimate_cutoff(Span<const float> values, Span<const float> residual, std::size_t k);
  std::size_t select(Span<const float> values, Span<float> residual, float cutoff);
  std::size_t trim(std::size_t count, std::size_t k, Span<float> residual);
  std::uint64_t next_random();
  void write_two_bit(std::size_t count, Span<float> residual, std::uint8_t* body);

  double density_;
  int value_bits_;
  std::uint64_t rng_;
  std::vector<std::uint32_t> idx_;  // candidate indices of one encode
  std::vector<float> val_;          // their values
  std::vector<float> scratch_;      // sampled or candidate magnitudes
};

}  // namespace starling::protocols::codecs
