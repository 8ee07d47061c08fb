#pragma once
// Helpers shared by the gossip algorithms that send a float vector as segments of raw fp32
// payload frames: how many segments a vector needs, and reading payload floats safely.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "gossip/transport/message.h"

namespace starling::gossip {

inline std::size_t segment_count(std::size_t length, std::size_t per_segment) {
  return std::max<std::size_t>(1, (length + per_segment - 1) / per_segment);
}

/// Float i of a payload; payloads need not be aligned.
inline float load_float(const unsigned char* p, std::size_t i) {
  float v;
  std::memcpy(&v, p + i * sizeof(float), sizeof v);
  return v;
}

/// Whether every float of the payload is finite: a peer never mixes in NaN or infinity.
inline bool all_finite(const Message& m) {
  const auto* p = static_cast<const unsigned char*>(m.payload.data());
  const std::size_t n = m.payload.size() / sizeof(float);
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(load_float(p, i))) return false;
  return true;
}

}  // namespace starling::gossip
