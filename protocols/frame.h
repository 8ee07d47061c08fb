#pragma once
// The fixed frame header every Starling message starts with, and its validation. A message
// is two ZeroMQ frames: this 48-byte header and one payload whose meaning depends on the
// message type (see membership_messages.h, tensor_messages.h, state_transfer.h,
// view_messages.h, state_hash_messages.h).
//
//  Header frame (little-endian, 48 bytes):
//  +--------+------+------------------------------------------------------------+
//  | offset | size | field                                                      |
//  +--------+------+------------------------------------------------------------+
//  |      0 |    4 | magic "STRL" (0x4C525453)                                  |
//  |      4 |    1 | protocol version (kProtocolVersion)                        |
//  |      5 |    1 | message type (MessageType)                                 |
//  |      6 |    1 | codec id (CodecId; 0 for messages without a tensor)       |
//  |      7 |    1 | flags (per message type; undefined bits must be zero)      |
//  |      8 |    4 | sender peer id                                             |
//  |     12 |    4 | CRC-32C of the payload frame                               |
//  |     16 |    8 | round / step                                               |
//  |     24 |    8 | tensor offset (elements into the flat parameter arena)     |
//  |     32 |    8 | tensor length (elements)                                   |
//  |     40 |    4 | payload length (bytes)                                     |
//  |     44 |    4 | reserved, zero                                             |
//  +--------+------+------------------------------------------------------------+
//  Payload frame: `payload length` bytes, layout per message type.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocols/codec_id.h"
#include "protocols/error.h"
#include "protocols/span.h"

namespace starling::protocols {

inline constexpr std::uint32_t kFrameMagic = 0x4C525453u;  // "STRL" read little-endian
// Raised when peers of two versions would misread each other; 2: the state digest is a root
// over chunk digests (state_request, state_manifest).
inline constexpr std::uint8_t kProtocolVersion = 2;
inline constexpr std::size_t kHeaderSize = 48;

enum class MessageType : std::uint8_t {
  hello = 1,              // join request / greeting with the model's shape signature
  heartbeat = 2,
  leave = 3,
  model_update = 4,       // a whole model update or one chunk of it
  gossip_push = 5,
  gossip_pull = 6,        // asks a neighbour for its model; empty payload (unused: hand-overs use state_request)
  gossip_pull_reply = 7,
  allreduce_segment = 8,  // one ring all-reduce segment (flags: phase)
  state_transfer = 9,     // one chunk of a state handed over (state_transfer.h)
  view = 10,              // membership view agreement: status, prepare, decide (view_messages.h)
  state_hash = 11,        // the digest of a member's shared state after a round (state_hash_messages.h)
  state_request = 12,     // asks for a state's chunk digests and/or some of its chunks (state_transfer.h)
  state_manifest = 13,    // a state's chunk digests, the answer to a state_request (state_transfer.h)
  outer_plan = 14,        // deferred outer steps: the round of a member's next pseudo-gradient (outer_plan_messages.h)
};

/// Flag bits of the header's flags byte; which ones a type allows is in allowed_flags().
enum FrameFlags : std::uint8_t {
  kFlagLastChunk = 1u << 0,  // model_update, gossip_*, state_transfer: final chunk of the round
  kFlagAllGather = 1u << 1,  // allreduce_segment: all-gather phase (else reduce-scatter)
};

struct FrameHeader {
  std::uint8_t version = kProtocolVersion;
  MessageType type = MessageType::heartbeat;
  CodecId codec = CodecId::none;
  std::uint8_t flags = 0;
  std::uint32_t sender = 0;
  std::uint32_t payload_crc = 0;
  std::uint64_t round = 0;
  std::uint64_t tensor_offset = 0;
  std::uint64_t tensor_length = 0;
  std::uint32_t payload_length = 0;
};

/// What a receiver accepts beyond the format itself.
struct FrameLimits {
  std::uint32_t max_payload = 1u << 30;  // larger declared or actual payloads are `oversized`
};

bool is_known_message_type(std::uint8_t byte);
/// Control messages keep the peers together rather than carry the model: hello,
/// heartbeat, leave, view and state_hash. The rest is data.
bool is_control_message(MessageType type);
/// Whether an encoded header (as encode_header writes it) is a control message's.
bool is_control_frame(ByteSpan header);
/// Whether the type carries a codec payload over [tensor_offset, tensor_offset + tensor_length).
bool carries_tensor(MessageType type);
std::uint8_t allowed_flags(MessageType type);

/// Writes the 48-byte header into out (resized to kHeaderSize).
void encode_header(const FrameHeader& header, std::vector<std::uint8_t>& out);

/// Fills payload_length and payload_crc from the payload, then encodes the header.
void encode_header_for(FrameHeader header, ByteSpan payload, std::vector<std::uint8_t>& out);

/// Parses and validates a header frame on its own (magic, version, type, codec, flags,
/// reserved field, declared payload length against limits).
Result<FrameHeader> decode_header(ByteSpan bytes, const FrameLimits& limits = {});

/// Checks a payload frame against its validated header: exact length, then CRC-32C.
Error verify_payload(const FrameHeader& header, ByteSpan payload);

/// Sender among `known` (sorted ascending) and round within [min_round, max_round].
Error check_origin(const FrameHeader& header, Span<const std::uint32_t> known, std::uint64_t min_round,
                   std::uint64_t max_round);

/// decode_header + verify_payload: the receive path's first step.
Result<FrameHeader> parse_frame(ByteSpan header, ByteSpan payload, const FrameLimits& limits = {});

}  // namespace starling::protocols
