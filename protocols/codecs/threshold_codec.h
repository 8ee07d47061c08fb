#pragma once
// Strom (2015) threshold quantization as Deeplearning4j implements it: every residual
// entry with |r| >= τ is sent as ±τ and τ is subtracted from it; the rest waits in r.
// τ adapts toward a target density (at most 2x per 20 encodes), and the residual can be
// clipped to ±C·τ. Payload body (format 0 = sparse, 1 = bitmap):
//   +0 f32 τ | +4 u32 count of entries sent |
//   sparse: count × i32  ±(index + 1), |value| strictly increasing
//   bitmap: ceil(n/16) × u32, 2 bits per entry LSB-first: 00 none, 01 +τ, 10 −τ (11 invalid)
// The bitmap is used when more than n/16 entries go, the point where it becomes smaller.
#include <cstdint>
#include <vector>

#include "protocols/codec.h"

namespace starling::protocols::codecs {

class ThresholdCodec final : public Codec {
 public:
  explicit ThresholdCodec(const CodecOptions& options);
  static constexpr CodecId kId{3};
  CodecId id() const override { return kId; }
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;

  /// The τ the next encode() uses.
  float tau() const { return tau_; }
  /// Whether the last encode() wrote the bitmap format.
  bool last_was_bitmap() const { return last_bitmap_; }

  static constexpr std::uint8_t kSparse = 0;
  static constexpr std::uint8_t kBitmap = 1;
  /// τ changes by at most this factor per encode: 2^(1/20), i.e. 2x per 20 rounds.
  static constexpr double kMaxStep = 1.0352649238413776;

 private:
  std::size_t encode_sparse_prefix(Span<const float> values, Span<float> residual, std::size_t& pos);
  std::size_t encode_bitmap(Span<const float> values, Span<float> residual, std::size_t pos,
                            std::size_t sparse_count, std::uint32_t* words);
  void adapt(std::size_t sent, std::size_t n);
  Error decode_sparse(ByteSpan entries, std::uint32_t count, float tau, Span<float> out, Apply apply) const;
  Error decode_bitmap(ByteSpan words, std::uint32_t count, float tau, Span<float> out, Apply apply) const;

  float tau_;
  double target_;
  float clip_;
  bool last_bitmap_ = false;
  std::vector<std::int32_t> sparse_;  // scratch for the sparse entries of one encode
};

}  // namespace starling::protocols::codecs
