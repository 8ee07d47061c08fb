#pragma once
// The 8-byte prefix shared by all codec payloads (layout in protocols/codec.h) and the
// argument checks every codec's encode and decode start with. Internal to protocols/.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocols/codec.h"

namespace starling::protocols::codecs {

inline constexpr std::size_t kPrefixSize = 8;
inline constexpr std::size_t kMaxElements = 0x7FFFFFFF;  // sparse indices are ±(i+1) in int32

/// Resizes out to kPrefixSize + body bytes and writes the prefix; returns the body pointer.
std::uint8_t* start_payload(std::vector<std::uint8_t>& out, CodecId id, std::uint8_t format,
                            std::size_t count, std::size_t body);

/// Checks codec id, reserved bytes and element count; on success format and body are set.
Error open_payload(ByteSpan payload, CodecId id, std::size_t count, std::uint8_t& format, ByteSpan& body);

/// values and residual have the same size, at most kMaxElements.
Error check_encode_args(Span<const float> values, Span<float> residual);

/// A finite, non-negative float (a scale); non_finite or bad_parameter otherwise.
Error check_scale(float scale);

}  // namespace starling::protocols::codecs
