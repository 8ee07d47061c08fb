#pragma once
// Codec identifiers as they appear on the wire (frame header byte 6 and the first byte of
// every codec payload), and their names as used in configs. Each codec's row states its id
// and name (protocols/codec_row.h); 0, raw fp32, is the one the frame format itself uses
// for messages without a codec payload.
#include <cstdint>
#include <string_view>

namespace starling::protocols {

enum class CodecId : std::uint8_t {
  none = 0,  // fp32
};

/// The config name of a codec this build has; "unknown" for other ids.
std::string_view codec_name(CodecId id);

/// Parses a codec name; false for anything else.
bool parse_codec_name(std::string_view name, CodecId& out);

/// Whether a wire byte names a codec this build has.
bool is_known_codec(std::uint8_t byte);

}  // namespace starling::protocols
