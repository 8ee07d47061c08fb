// Frame header encoding and validation (protocols/frame.h).
#include "protocols/frame.h"

#include <algorithm>

#include "protocols/byte_io.h"
#include "protocols/crc32c.h"

namespace starling::protocols {

bool is_known_message_type(std::uint8_t byte) {
  return byte >= static_cast<std::uint8_t>(MessageType::hello) &&
         byte <= static_cast<std::uint8_t>(MessageType::outer_plan);
}

bool carries_tensor(MessageType type) {
  switch (type) {
    case MessageType::model_update:
    case MessageType::gossip_push:
    case MessageType::gossip_pull_reply:
    case MessageType::allreduce_segment:
    case MessageType::state_transfer: return true;
    default: return false;
  }
}

std::uint8_t allowed_flags(MessageType type) {
  switch (type) {
    case MessageType::model_update:
    case MessageType::gossip_push:
    case MessageType::gossip_pull_reply:
    case MessageType::state_transfer: return kFlagLastChunk;
    case MessageType::allreduce_segment: return kFlagAllGather;
    default: return 0;
  }
}

bool is_control_message(MessageType type) {
  return type == MessageType::hello || type == MessageType::heartbeat || type == MessageType::leave ||
         type == MessageType::view || type == MessageType::state_hash;
}

bool is_control_frame(ByteSpan header) {
  return header.size() > 5 && is_known_message_type(header.data()[5]) &&
         is_control_message(static_cast<MessageType>(header.data()[5]));
}

void encode_header(const FrameHeader& h, std::vector<std::uint8_t>& out) {
  out.assign(kHeaderSize, 0);
  std::uint8_t* p = out.data();
  store_le<std::uint32_t>(p + 0, kFrameMagic);
  p[4] = h.version;
  p[5] = static_cast<std::uint8_t>(h.type);
  p[6] = static_cast<std::uint8_t>(h.codec);
  p[7] = h.flags;
  store_le<std::uint32_t>(p + 8, h.sender);
  store_le<std::uint32_t>(p + 12, h.payload_crc);
  store_le<std::uint64_t>(p + 16, h.round);
  store_le<std::uint64_t>(p + 24, h.tensor_offset);
  store_le<std::uint64_t>(p + 32, h.tensor_length);
  store_le<std::uint32_t>(p + 40, h.payload_length);
}

void encode_header_for(FrameHeader header, ByteSpan payload, std::vector<std::uint8_t>& out) {
  header.payload_length = static_cast<std::uint32_t>(payload.size());
  header.payload_crc = crc32c(payload.data(), payload.size());
  encode_header(header, out);
}

namespace {

// Fields that only make sense together: tensor fields only on tensor messages, and a
// range that does not wrap around.
Error check_consistency(const FrameHeader& h) {
  if (h.flags & ~allowed_flags(h.type)) return Error::bad_header;
  if (!carries_tensor(h.type)) {
    if (h.codec != CodecId::none || h.tensor_offset != 0 || h.tensor_length != 0) return Error::bad_header;
    return Error::ok;
  }
  if (h.tensor_offset + h.tensor_length < h.tensor_offset) return Error::bad_header;
  return Error::ok;
}

}  // namespace

Result<FrameHeader> decode_header(ByteSpan bytes, const FrameLimits& limits) {
  if (bytes.size() < kHeaderSize) return Error::truncated;
  if (bytes.size() > kHeaderSize) return Error::oversized;
  const std::uint8_t* p = bytes.data();
  if (load_le<std::uint32_t>(p) != kFrameMagic) return Error::bad_magic;
  if (p[4] != kProtocolVersion) return Error::unsupported_version;
  if (!is_known_message_type(p[5])) return Error::unknown_message_type;
  if (!is_known_codec(p[6])) return Error::unknown_codec;
  if (load_le<std::uint32_t>(p + 44) != 0) return Error::bad_header;
  FrameHeader h;
  h.version = p[4];
  h.type = static_cast<MessageType>(p[5]);
  h.codec = static_cast<CodecId>(p[6]);
  h.flags = p[7];
  h.sender = load_le<std::uint32_t>(p + 8);
  h.payload_crc = load_le<std::uint32_t>(p + 12);
  h.round = load_le<std::uint64_t>(p + 16);
  h.tensor_offset = load_le<std::uint64_t>(p + 24);
  h.tensor_length = load_le<std::uint64_t>(p + 32);
  h.payload_length = load_le<std::uint32_t>(p + 40);
  if (h.payload_length > limits.max_payload) return Error::oversized;
  if (Error e = check_consistency(h); e != Error::ok) return e;
  return h;
}

Error verify_payload(const FrameHeader& header, ByteSpan payload) {
  if (payload.size() < header.payload_length) return Error::truncated;
  if (payload.size() > header.payload_length) return Error::oversized;
  if (crc32c(payload.data(), payload.size()) != header.payload_crc) return Error::crc_mismatch;
  return Error::ok;
}

Error check_origin(const FrameHeader& header, Span<const std::uint32_t> known, std::uint64_t min_round,
                   std::uint64_t max_round) {
  if (!std::binary_search(known.begin(), known.end(), header.sender)) return Error::unknown_sender;
  if (header.round < min_round || header.round > max_round) return Error::unexpected_round;
  return Error::ok;
}

Result<FrameHeader> parse_frame(ByteSpan header, ByteSpan payload, const FrameLimits& limits) {
  Result<FrameHeader> h = decode_header(header, limits);
  if (!h) return h;
  if (Error e = verify_payload(*h, payload); e != Error::ok) return e;
  return h;
}

}  // namespace starling::protocols
