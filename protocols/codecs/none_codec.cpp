// Codec "none": fp32 values as they are, lossless (protocols/codecs/dense_codec.h).
#include "protocols/codecs/dense_codec.h"

namespace starling::protocols::codecs {
namespace {

constexpr CodecSample kSamples[] = {{"none", {}}};

}  // namespace

extern constexpr CodecRow none_codec_row = dense_row<kFp32>("none", kSamples);

}  // namespace starling::protocols::codecs
