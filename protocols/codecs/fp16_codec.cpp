// Codec "fp16": IEEE half precision, rounded to nearest even and saturating at ±65504
// (protocols/codecs/dense_codec.h).
#include "protocols/codecs/dense_codec.h"

namespace starling::protocols::codecs {
namespace {

constexpr DenseFormat kFp16{CodecId{1}, 2, &simd::CodecKernels::fp16_encode, &simd::CodecKernels::fp16_finite,
                            &simd::CodecKernels::fp16_decode};
constexpr CodecSample kSamples[] = {{"fp16", {}}};

}  // namespace

extern constexpr CodecRow fp16_codec_row = dense_row<kFp16>("fp16", kSamples);

}  // namespace starling::protocols::codecs
