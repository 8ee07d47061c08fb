#pragma once
// Test helpers for fault scenarios: the fault of a flipped bit, in a float's lowest mantissa
// bit (the value stays finite and within one unit in the last place, so only a digest can
// tell), and finding the log line that names what was caught.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace starling::gossip::testing {

inline void flip_low_bit(float& x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits ^= 1u;
  std::memcpy(&x, &bits, sizeof bits);
}

/// Whether one of `lines` holds both `a` and `b`.
inline bool any_contains(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
  for (const std::string& line : lines)
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
  return false;
}

}  // namespace starling::gossip::testing
