#pragma once
// What the dense codecs share: every value sent on its own in a fixed width, rounded by its
// format's kernels (fp32 exactly, fp16 and bf16 to nearest even, saturating at the format's
// largest finite value); the rounding error stays in the residual. Payload body: n values of
// `width` bytes, little-endian. Each format is a codec row of its own (none_codec.cpp,
// fp16_codec.cpp, bf16_codec.cpp).
#include "protocols/codec.h"
#include "protocols/codec_row.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::codecs {

/// A dense format: its wire id, bytes per value, and its kernels in simd::CodecKernels.
struct DenseFormat {
  using Encode = void (*)(const float* v, float* r, std::uint8_t* out, std::size_t n);
  using Finite = bool (*)(const std::uint8_t* in, std::size_t n);
  using Decode = void (*)(const std::uint8_t* in, float* out, std::size_t n, bool add);
  CodecId id;
  std::size_t width;
  Encode simd::CodecKernels::*encode;
  Finite simd::CodecKernels::*finite;
  Decode simd::CodecKernels::*decode;
};

/// fp32, the frame format's own ("none"): lossless, the residual becomes zero.
inline constexpr DenseFormat kFp32{CodecId::none, 4, &simd::CodecKernels::f32_encode, &simd::CodecKernels::f32_finite,
                                   &simd::CodecKernels::f32_decode};

class DenseCodec final : public Codec {
 public:
  explicit DenseCodec(const DenseFormat& format) : format_(format) {}
  CodecId id() const override { return format_.id; }
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;

 private:
  DenseFormat format_;
};

/// The row of a dense format: no options, each value decoded on its own (it rides the ring).
template <const DenseFormat& format>
constexpr CodecRow dense_row(std::string_view name, Span<const CodecSample> samples) {
  return {format.id, name, AllreduceRoute::ring, {}, nullptr,
          [](const CodecOptions&) -> std::unique_ptr<Codec> { return std::make_unique<DenseCodec>(format); }, nullptr,
          samples};
}

}  // namespace starling::protocols::codecs
