// Reading the codec rows (protocols/codec_row.h); the table itself is generated.
#include <cmath>
#include <cstdio>

#include "protocols/codec_row.h"

namespace starling::protocols {
namespace {

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

}  // namespace

bool CodecParam::allows(double value) const {
  if (!std::isfinite(value) || (integer && value != std::floor(value))) return false;
  return (open_min ? value > min : value >= min) && value <= max;
}

std::string CodecParam::range() const {
  return std::string(integer ? "an integer" : "a number") + " in " + (open_min ? "(" : "[") + number(min) + ", " +
         number(max) + "]";
}

CodecOptions CodecSample::options() const {
  CodecOptions o;
  for (const auto& [name, value] : values) o.set(name, value);
  return o;
}

const CodecParam* CodecRow::param(std::string_view param_name) const {
  for (const CodecParam& p : params)
    if (p.name == param_name) return &p;
  return nullptr;
}

std::optional<double> CodecRow::value(const CodecOptions& options, std::string_view param_name) const {
  const CodecParam* p = param(param_name);
  if (!p) return std::nullopt;
  return p->of(options);
}

const CodecRow* codec_row(CodecId id) {
  for (const CodecRow* row : codec_rows())
    if (row->id == id) return row;
  return nullptr;
}

const CodecRow* codec_row(std::string_view name) {
  for (const CodecRow* row : codec_rows())
    if (row->name == name) return row;
  return nullptr;
}

std::optional<OptionProblem> check_options(const CodecRow& row, const CodecOptions& options) {
  for (const CodecParam& p : row.params)
    if (!p.allows(p.of(options))) return OptionProblem{p.name, "expected " + p.range()};
  return row.check ? row.check(options) : std::nullopt;
}

std::string_view codec_name(CodecId id) {
  const CodecRow* row = codec_row(id);
  return row ? row->name : std::string_view("unknown");
}

bool parse_codec_name(std::string_view name, CodecId& out) {
  const CodecRow* row = codec_row(name);
  if (row) out = row->id;
  return row != nullptr;
}

bool is_known_codec(std::uint8_t byte) { return codec_row(static_cast<CodecId>(byte)) != nullptr; }

}  // namespace starling::protocols
