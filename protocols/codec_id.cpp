// Codec names (protocols/codec_id.h).
#include "protocols/codec_id.h"

namespace starling::protocols {
std::string_view codec_name(CodecId id) {
  auto i = static_cast<std::uint8_t>(id);
  return i < kCodecCount ? kCodecNames[i] : std::string_view("unknown");
}

bool parse_codec_name(std::string_view name, CodecId& out) {
  for (int i = 0; i < kCodecCount; ++i) {
    if (name == kCodecNames[i]) {
      out = static_cast<CodecId>(i);
      return true;
    }
  }
  return false;
}

}  // namespace starling::protocols
