// Layer rows: the lookups, a description's options, and the exports' value texts
// (learners/models/layer_row.h).
#include "learners/models/layer_row.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace starling {
namespace {

std::string bound_text(double value, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(value));
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

bool LayerKey::allows(double value) const {
  if (!std::isfinite(value) || value < min || value > max) return false;
  if ((open_min && value == min) || (open_max && value == max)) return false;
  if (type == Type::integer && value != std::floor(value)) return false;
  return type != Type::flag || value == 0.0 || value == 1.0;
}

std::string LayerKey::range() const {
  if (type == Type::flag) return "true or false";
  const bool integer = type == Type::integer;
  return std::string(integer ? "an integer in " : "a number in ") + (open_min ? "(" : "[") + bound_text(min, integer) +
         ", " + bound_text(max, integer) + (open_max ? ")" : "]");
}

std::string_view LayerDesc::kind() const { return row ? row->name : std::string_view("?"); }

LayerDesc& LayerDesc::set(std::string_view name, double value) {
  for (auto& option : options)
    if (option.first == name) return option.second = value, *this;
  options.emplace_back(std::string(name), value);
  return *this;
}

bool LayerDesc::has(std::string_view name) const {
  for (const auto& option : options)
    if (option.first == name) return true;
  return false;
}

double LayerDesc::value(std::string_view name) const {
  for (const auto& option : options)
    if (option.first == name) return option.second;
  const LayerKey* key = row ? row->key(name) : nullptr;
  if (key && !key->fallback_from.empty()) return value(key->fallback_from);
  if (!key || key->required())
    throw std::logic_error(std::string(kind()) + ": no value for '" + std::string(name) + "'");
  return key->fallback;
}

LayerDesc layer_of(std::string_view kind) {
  LayerDesc d;
  d.row = layer_row(kind);
  if (!d.row) throw std::invalid_argument("model: unknown layer kind '" + std::string(kind) + "'");
  return d;
}

void DescribeContext::require_tokens(const LayerDesc& d, const std::string& label) const {
  if (embedding_vocab != 0 && d.in.h == 1) return;
  fail("kind", label + ": its input " + std::to_string(d.in.h) + "x" + std::to_string(d.in.w) + "x" +
                   std::to_string(d.in.c) + " is not a token sequence (put a token_embedding before it)");
}

const LayerKey* LayerRow::key(std::string_view key_name) const {
  for (std::size_t i = 0; i < key_count; ++i)
    if (keys[i].name == key_name) return &keys[i];
  return nullptr;
}

const LayerRow* layer_row(std::string_view name) {
  for (const LayerRow* row : layer_table())
    if (row->name == name) return row;
  return nullptr;
}

std::vector<std::string> layer_names() {
  std::vector<std::string> names;
  for (const LayerRow* row : layer_table()) names.emplace_back(row->name);
  return names;
}

namespace {

std::string key_doc(const LayerKey& key) {
  std::string out(key.name);
  if (!key.fallback_from.empty()) out += " = " + std::string(key.fallback_from);
  else if (key.type == LayerKey::Type::flag) out += " = " + flag_text(key.fallback != 0.0);
  else if (key.allows(key.fallback))
    out += " = " + (key.type == LayerKey::Type::integer ? bound_text(key.fallback, true) : number_text(key.fallback, true));
  if (!key.only_with.empty()) out += " (with " + std::string(key.only_with) + ")";
  return out;
}

}  // namespace

std::string layer_kinds_doc() {
  std::string out;
  for (const LayerRow* row : layer_table()) {
    out += std::string(out.empty() ? "" : ", ") + "`{ kind = \"" + std::string(row->name) + "\"";
    for (std::size_t k = 0; k < row->key_count; ++k) out += ", " + key_doc(row->keys[k]);
    if (row->nested) out += ", body = [...], shortcut = [...]";
    out += " }`";
    if (!row->doc.empty()) out += " (" + std::string(row->doc) + ")";
  }
  return out;
}

std::string json_key(std::string_view name, const std::string& value) {
  return ", \"" + std::string(name) + "\": " + value;
}

std::string toml_key(std::string_view name, const std::string& value) { return std::string(name) + " = " + value + "\n"; }

// A written list rebuilds the same initial weights and dropout masks only if every number
// reads back as the same bits; TOML and JSON both need the decimal point to read a number.
std::string number_text(double value, bool single) {
  char text[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (single ? std::strtof(text, nullptr) == static_cast<float>(value) : std::strtod(text, nullptr) == value) break;
  }
  std::string out = text;
  return out.find_first_of(".e") == std::string::npos ? out + ".0" : out;
}

}  // namespace starling
