#pragma once
// Helpers shared by the protocols fuzz targets: how an input picks the tensor size, and the
// property every successful decode must keep (a finite destination: never a corrupted model).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocols/codec.h"

namespace starling::protocols::fuzz {

inline constexpr std::size_t kMaxElements = 1 << 16;

/// The element count a payload announces (bytes 4..7), kept small; a mismatch is fuzzed too.
inline std::size_t elements_for(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return size;
  std::uint32_t count;
  std::memcpy(&count, data + 4, 4);
  return count <= kMaxElements ? count : count % (kMaxElements + 1);
}

/// Aborts (a finding) if a decode reported success but left a non-finite value behind.
inline void require_finite(const std::vector<float>& out) {
  for (float x : out)
    if (!std::isfinite(x)) __builtin_trap();
}

/// Decodes with a fresh codec of `id` into a zeroed destination, both assign and add.
inline void decode_both_ways(CodecId id, const std::uint8_t* data, std::size_t size) {
  auto codec = make_codec(id);
  if (!codec) __builtin_trap();
  std::vector<float> out(elements_for(data, size), 0.0f);
  for (Apply apply : {Apply::assign, Apply::add}) {
    const Error e = (*codec)->decode(ByteSpan(data, size), Span<float>(out), apply);
    if (e == Error::ok) require_finite(out);
    std::fill(out.begin(), out.end(), 0.0f);
  }
}

}  // namespace starling::protocols::fuzz
