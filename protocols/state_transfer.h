#pragma once
// The state-transfer family: a peer that joins receives the central model and optimizer
// state in chunks, losslessly (codec none only). Header tensor offset and length locate
// the chunk inside its section; kFlagLastChunk marks the section's last chunk.
//
//  state_transfer payload:
//  +--------+------+---------------------------------------------------+
//  |      0 |    4 | section (StateSection)                            |
//  |      4 |    4 | reserved, zero                                    |
//  |      8 |    8 | section length (elements)                         |
//  |     16 |  ... | codec payload of codec none (protocols/codec.h)  |
//  +--------+------+---------------------------------------------------+
#include <cstdint>
#include <vector>

#include "protocols/error.h"
#include "protocols/frame.h"

namespace starling::protocols {

enum class StateSection : std::uint32_t { parameters = 0, optimizer = 1 };

struct StateChunk {
  std::uint32_t sender = 0;
  std::uint64_t round = 0;
  StateSection section = StateSection::parameters;
  std::uint64_t offset = 0;  // chunk start inside the section
  std::uint64_t length = 0;  // chunk elements
  bool last = false;
};

/// Encodes section[offset, offset + length) (invalid_option if outside the section).
Error encode_state_chunk(const StateChunk& chunk, Span<const float> section, std::vector<std::uint8_t>& header,
                         std::vector<std::uint8_t>& payload);

/// Validates a parsed state_transfer frame and copies its chunk into `section`, whose size
/// must equal the announced section length. Returns the chunk's description.
Result<StateChunk> decode_state_chunk(const FrameHeader& header, ByteSpan payload, Span<float> section);

}  // namespace starling::protocols
