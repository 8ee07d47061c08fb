#pragma once
// Counts carried in an algorithm's float state (SyncAlgorithm::state), such as where a codec
// stream's random draws stand: four 16-bit pieces each, every piece exact in a float.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace starling::gossip {

inline constexpr std::size_t kFloatsPerCount = 4;

inline void append_count(std::vector<float>& values, std::uint64_t count) {
  for (std::size_t piece = 0; piece < kFloatsPerCount; ++piece)
    values.push_back(static_cast<float>((count >> (16 * piece)) & 0xffff));
}

/// False, count unspecified, where a piece is not a whole number in [0, 65535].
inline bool read_count(const float* values, std::uint64_t& count) {
  count = 0;
  for (std::size_t piece = 0; piece < kFloatsPerCount; ++piece) {
    const float v = values[piece];
    if (!(v >= 0.0f && v <= 65535.0f) || v != static_cast<float>(static_cast<int>(v))) return false;
    count |= static_cast<std::uint64_t>(v) << (16 * piece);
  }
  return true;
}

}  // namespace starling::gossip
