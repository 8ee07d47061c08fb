// Codec "bf16": bfloat16 (fp32's 8-bit exponent, 8 significant bits), rounded to nearest
// even and saturating at its largest finite value (protocols/codecs/dense_codec.h). Its
// range is fp32's, so unlike fp16 it carries tiny pseudo-gradients and huge sums alike.
#include "protocols/codecs/dense_codec.h"

namespace starling::protocols::codecs {
namespace {

constexpr DenseFormat kBf16{CodecId{2}, 2, &simd::CodecKernels::bf16_encode, &simd::CodecKernels::bf16_finite,
                            &simd::CodecKernels::bf16_decode};
constexpr CodecSample kSamples[] = {{"bf16", {}}};

}  // namespace

extern constexpr CodecRow bf16_codec_row = dense_row<kBf16>("bf16", kSamples);

}  // namespace starling::protocols::codecs
