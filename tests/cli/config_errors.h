#pragma once
// What the config tests share: the error message of parsing a config text, and a substring test.
#include <string>
#include <vector>

#include "cli/config.h"

namespace starling::cli::testing {

// The error message of parsing `text` (as test.toml), or "" when it parsed.
inline std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(text, "test.toml", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace starling::cli::testing
