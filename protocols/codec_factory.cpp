// Codec options, and codecs by id or name from their rows (protocols/codec.h).
#include <algorithm>

#include "protocols/codec.h"
#include "protocols/codec_row.h"

namespace starling::protocols {

CodecOptions& CodecOptions::set(std::string_view name, double value) {
  auto it = std::find_if(values_.begin(), values_.end(), [&](const auto& v) { return v.first == name; });
  if (it == values_.end()) values_.emplace_back(std::string(name), value);
  else it->second = value;
  return *this;
}

std::optional<double> CodecOptions::find(std::string_view name) const {
  for (const auto& [key, value] : values_)
    if (key == name) return value;
  return std::nullopt;
}

Error validate_options(CodecId id, const CodecOptions& options) {
  const CodecRow* row = codec_row(id);
  if (!row) return Error::unknown_codec;
  return check_options(*row, options) ? Error::invalid_option : Error::ok;
}

Result<std::unique_ptr<Codec>> make_codec(CodecId id, const CodecOptions& options) {
  const CodecRow* row = codec_row(id);
  if (!row) return Error::unknown_codec;
  if (check_options(*row, options)) return Error::invalid_option;
  return row->make(options);
}

Result<std::unique_ptr<Codec>> make_codec(std::string_view name, const CodecOptions& options) {
  const CodecRow* row = codec_row(name);
  if (!row) return Error::unknown_codec;
  return make_codec(row->id, options);
}

}  // namespace starling::protocols
