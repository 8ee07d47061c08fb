#pragma once
// The state-transfer family: a peer that joins, falls behind or lost the members' agreement
// takes a state (the model, and the shared state beyond it) from others, losslessly, in the
// chunks of protocols/state_digest.h (gossip/control/model_transfer.h runs the exchange).
//
// state_request (taker -> seeder): what to send. Chunks are numbered as ChunkLayout numbers
// them for the seeder's state (with the shared state when bit 1 is set, else the model alone).
//  +--------+------+---------------------------------------------------+
//  |      0 |    4 | flags: bit 0 the chunk digests, bit 1 with the    |
//  |        |      | shared state; other bits zero                     |
//  |      4 |    4 | chunk count (zero: the digests alone)             |
//  |      8 |    8 | first chunk                                       |
//  +--------+------+---------------------------------------------------+
//
// state_manifest (seeder -> taker), sent before any chunk of the same request; the header
// round carries the iteration the state belongs to:
//  +--------+------+---------------------------------------------------+
//  |      0 |    8 | model length (elements)                           |
//  |      8 |    8 | shared state length (elements)                    |
//  |     16 |    8 | chunk length (elements; chunk_layout's rule)      |
//  |     24 | 8·n  | the n chunk digests, in chunk order               |
//  +--------+------+---------------------------------------------------+
//
// state_transfer (seeder -> taker), one per chunk: codec none only; header tensor offset and
// length locate the chunk inside its section, kFlagLastChunk marks the section's last
// chunk, and the header round carries the iteration.
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
#include "protocols/state_digest.h"

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

struct StateRequest {
  bool digests = false;     // the chunk digests (a state_manifest), before any chunk
  bool shared = false;      // the state with its shared part (else the model alone)
  std::uint64_t first = 0;  // the chunks [first, first + count)
  std::uint32_t count = 0;
};

void encode_state_request(const StateRequest& request, std::vector<std::uint8_t>& payload);
/// bad_parameter for unknown flags or a request for nothing; truncated / oversized for
/// another size than 16 bytes; tensor_out_of_range when first + count wraps around.
Result<StateRequest> decode_state_request(ByteSpan payload);

void encode_state_manifest(const StateManifest& manifest, std::vector<std::uint8_t>& payload);
/// bad_parameter when the chunk length is not chunk_layout's for the lengths (the rule every
/// peer uses), length_mismatch when the digests are not one per chunk.
Result<StateManifest> decode_state_manifest(ByteSpan payload);

}  // namespace starling::protocols
