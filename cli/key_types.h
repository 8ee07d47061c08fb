#pragma once
// The builders of a config key's type (cli/config_schema.h's KeyType): its kind, default and
// range, as config_schema.cpp's rows state them.
#include "cli/config_schema.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace starling::cli::key_types {

inline constexpr double kInf = std::numeric_limits<double>::max();
inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr bool kOpen = true;  // number(): the minimum itself is not allowed

inline KeyType of_kind(KeyKind kind) {
  KeyType t;
  t.kind = kind;
  return t;
}

inline KeyType flag(bool fallback) {
  KeyType t = of_kind(KeyKind::flag);
  t.fallback.flag = fallback;
  return t;
}

inline KeyType integer(int64_t fallback, int64_t min, int64_t max, KeyKind kind = KeyKind::integer) {
  KeyType t = of_kind(kind);
  t.fallback.integer = fallback;
  t.int_min = min, t.int_max = max;
  return t;
}

inline KeyType number(double fallback, double min, double max, bool open_min = false) {
  KeyType t = of_kind(KeyKind::number);
  t.fallback.number = fallback;
  t.min = min, t.max = max, t.open_min = open_min;
  return t;
}

// A positive number at most `max`, or "adaptive" (the default, read as 0).
inline KeyType number_or_adaptive(double fallback, double max) {
  KeyType t = number(fallback, 0.0, max, true);
  t.kind = KeyKind::number_or_adaptive;
  return t;
}

inline KeyType text(std::string fallback, KeyKind kind = KeyKind::text) {
  KeyType t = of_kind(kind);
  t.fallback.text = std::move(fallback);
  return t;
}

inline KeyType choice(std::string fallback, std::vector<std::string> choices) {
  KeyType t = text(std::move(fallback), KeyKind::choice);
  t.choices = std::move(choices);
  return t;
}

// A choice among an enum's names, as its header lists them.
template <typename Name, std::size_t N>
inline KeyType choice_of(const Name (&names)[N], std::size_t fallback = 0) {
  return choice(std::string(names[fallback]), std::vector<std::string>(std::begin(names), std::end(names)));
}

inline KeyType integers(std::vector<int> fallback) {
  KeyType t = of_kind(KeyKind::integers);
  t.fallback.integers = std::move(fallback);
  return t;
}

inline KeyType required(KeyType t) {
  t.required = true;
  return t;
}

}  // namespace starling::cli::key_types
