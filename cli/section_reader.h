#pragma once
// Typed, validated reading of one TOML table for the config parsers: every value is checked
// against its type and range, keys nobody asked for are reported, and every error is a
// ConfigError naming the file, the line and the full key.
#include "cli/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace starling::cli {

/// Parses a TOML file; a syntax error or an unreadable file is a ConfigError naming it.
inline toml::table parse_toml_file(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    if (e.source().begin.line == 0) throw ConfigError(path + ": cannot read the file");
    throw ConfigError(path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
}

// Reads one section, remembering which keys it consumed so that the rest are reported
// as unknown; errors carry file:line and the full key.
class SectionReader {
 public:
  SectionReader(const toml::table& root, std::string section, std::string file, const std::set<std::string>& overridden)
      : section_(std::move(section)), file_(std::move(file)), overridden_(overridden) {
    if (const auto* node = root.get(section_)) {
      table_ = node->as_table();
      if (!table_) fail(*node, section_, "a table [" + section_ + "]");
    }
  }
  /// One table of an array of tables ([[section]]); its keys are named section.key.
  SectionReader(const toml::table& table, std::string section, std::string file)
      : section_(std::move(section)), file_(std::move(file)), overridden_(no_overrides()), table_(&table), in_array_(true) {}

  double number(const std::string& key, double fallback, double min, double max, bool exclusive_min = false) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    const auto value = node->value<double>();
    if (!value || !(node->is_integer() || node->is_floating_point())) fail(*node, key, "a number");
    if (!std::isfinite(*value) || *value < min || (exclusive_min && *value == min) || *value > max)
      fail(*node, key, range_text(min, max, exclusive_min) + ", got " + std::to_string(*value));
    return *value;
  }

  int64_t integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    if (!node->is_integer()) fail(*node, key, "an integer");
    const int64_t value = *node->value<int64_t>();
    if (value < min || value > max)
      fail(*node, key, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + std::to_string(value));
    return value;
  }

  bool is_text(const std::string& key) const {
    const toml::node* node = table_ ? table_->get(key) : nullptr;
    return node && node->is_string();
  }

  bool boolean(const std::string& key, bool fallback) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    if (!node->is_boolean()) fail(*node, key, "true or false");
    return *node->value<bool>();
  }

  std::string text(const std::string& key, const std::string& fallback) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    if (!node->is_string()) fail(*node, key, "a string");
    return *node->value<std::string>();
  }

  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& options) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    const auto value = node->value<std::string>();
    std::string list;
    for (const auto& o : options) list += (list.empty() ? "\"" : ", \"") + o + "\"";
    if (!node->is_string() || std::find(options.begin(), options.end(), *value) == options.end())
      fail(*node, key, "one of " + list + (value ? ", got \"" + *value + "\"" : ""));
    return *value;
  }

  std::vector<int> positive_ints(const std::string& key, const std::vector<int>& fallback) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    const auto* array = node->as_array();
    if (!array) fail(*node, key, "an array of positive integers");
    std::vector<int> out;
    for (const auto& item : *array) {
      const auto value = item.value<int64_t>();
      if (!item.is_integer() || *value < 1 || *value > 1 << 20) fail(item, key, "an array of positive integers");
      out.push_back(static_cast<int>(*value));
    }
    return out;
  }

  /// Refuses a key this section set to a value the rest of the config rules out: a
  /// ConfigError naming where it was set and what it must be.
  [[noreturn]] void reject(const std::string& key, const std::string& expected) const {
    throw ConfigError(where(key) + ": expected " + expected);
  }

  /// Where `key` was set, as errors name it ("file:line: section.key", or "--set
  /// section.key: section.key" for an override). An unset key of one table of an array is
  /// named at that table's line; of a section, "file: section.key".
  std::string where(const std::string& key) const {
    if (const toml::node* node = table_ ? table_->get(key) : nullptr) return where(*node, key);
    if (in_array_) return where(*table_, key);
    return file_ + ": " + section_ + "." + key;
  }

  /// Whether the section sets `key`.
  bool has(const std::string& key) const { return table_ && table_->contains(key); }

  /// Marks a key the caller reads itself, so finish() does not report it.
  void take_external(const std::string& key) { taken_.insert(key); }

  /// Reports the first key that nothing asked for.
  void finish() {
    if (!table_) return;
    for (const auto& [key, node] : *table_)
      if (!taken_.count(std::string(key.str()))) fail(node, std::string(key.str()), "no such key in [" + section_ + "]");
  }

 private:
  const toml::node* take(const std::string& key) {
    taken_.insert(key);
    return table_ ? table_->get(key) : nullptr;
  }

  [[noreturn]] void fail(const toml::node& node, const std::string& key, const std::string& expected) const {
    throw ConfigError(where(node, key) + ": expected " + expected);
  }

  // "file:line: section.key", or "--set section.key: section.key" for an override.
  std::string where(const toml::node& node, const std::string& key) const {
    const std::string full = key == section_ ? key : section_ + "." + key;
    std::ostringstream out;
    if (overridden_.count(full)) out << "--set " << full;
    else {
      out << file_;
      if (node.source().begin.line > 0) out << ":" << node.source().begin.line;
    }
    out << ": " << full;
    return out.str();
  }

  static std::string range_text(double min, double max, bool exclusive_min) {
    std::ostringstream out;
    out << std::setprecision(10) << "a number in " << (exclusive_min ? "(" : "[") << min << ", ";
    if (max == std::numeric_limits<double>::max()) out << "inf)";
    else out << max << "]";
    return out.str();
  }

  static const std::set<std::string>& no_overrides() {
    static const std::set<std::string> none;
    return none;
  }

  std::string section_, file_;
  const std::set<std::string>& overridden_;
  const toml::table* table_ = nullptr;
  bool in_array_ = false;
  std::set<std::string> taken_;
};

}  // namespace starling::cli
