#pragma once
// Top-k sparsification with error feedback (DGC, Lin et al. 2018): sends about
// k = ceil(density·n) entries of largest |values + residual| with their exact values and
// zeroes them in the residual. The cut-off is estimated from a random sample of the
// entries (sorting everything is far too slow), then trimmed to exactly k if the sample
// let too many through. Payload body:
//   +0 u32 count | count × u32 index (strictly increasing) | count × f32 value
#include <cstdint>
#include <vector>

#include "protocols/codec.h"

namespace starling::protocols::codecs {

class TopKCodec final : public Codec {
 public:
  explicit TopKCodec(const CodecOptions& options);
  CodecId id() const override { return CodecId::topk; }
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;

 private:
  float estimate_cutoff(Span<const float> values, Span<const float> residual, std::size_t k);
  std::size_t select(Span<const float> values, Span<float> residual, float cutoff);
  std::size_t trim(std::size_t count, std::size_t k, Span<float> residual);
  std::uint64_t next_random();

  double density_;
  std::uint64_t rng_;
  std::vector<std::uint32_t> idx_;  // candidate indices of one encode
  std::vector<float> val_;          // their values
  std::vector<float> scratch_;      // sampled or candidate magnitudes
};

}  // namespace starling::protocols::codecs
