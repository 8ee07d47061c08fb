#pragma once
// Codec identifiers as they appear on the wire (frame header byte 6 and the first byte of
// every codec payload), and their names as used in configs.
#include <cstdint>
#include <iterator>
#include <string_view>

namespace starling::protocols {

enum class CodecId : std::uint8_t {
  none = 0,  // fp32
  fp16 = 1,
  bf16 = 2,
  threshold = 3,
  topk = 4,
  qsgd = 5,
  sign = 6,
  powersgd = 7,
};

inline constexpr int kCodecCount = 8;
/// The config's name of each codec, indexed by CodecId.
inline constexpr std::string_view kCodecNames[] = {"none", "fp16", "bf16", "threshold", "topk", "qsgd", "sign", "powersgd"};
static_assert(std::size(kCodecNames) == kCodecCount && static_cast<int>(CodecId::powersgd) + 1 == kCodecCount,
              "one name per CodecId");

/// A name of kCodecNames; "unknown" for values outside the enum.
std::string_view codec_name(CodecId id);

/// Parses a codec name; false for anything else.
bool parse_codec_name(std::string_view name, CodecId& out);

/// Whether a wire byte names a codec this build knows.
inline bool is_known_codec(std::uint8_t byte) { return byte < kCodecCount; }

}  // namespace starling::protocols
