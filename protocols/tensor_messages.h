#pragma once
// The tensor family: model_update, gossip_push, gossip_pull_reply and allreduce_segment
// carry one codec payload covering elements [tensor offset, tensor offset + tensor length)
// of the flat parameter arena; gossip_pull asks for a reply and has an empty payload.
//
//  header: type, codec id, round, tensor offset, tensor length as in frame.h; flags:
//          kFlagLastChunk (update/push/reply: last chunk of this round),
//          kFlagAllGather (allreduce_segment: all-gather phase, else reduce-scatter)
//  payload (codec payload, see protocols/codec.h):
//  +--------+------+-------------------------------------------+
//  |      0 |    1 | codec id (equals the header's)            |
//  |      1 |    1 | codec format                              |
//  |      2 |    2 | reserved, zero                            |
//  |      4 |    4 | element count (equals tensor length)      |
//  |      8 |  ... | codec body                                |
//  +--------+------+-------------------------------------------+
#include <cstdint>
#include <vector>

#include "protocols/codec.h"
#include "protocols/frame.h"

namespace starling::protocols {

/// Where a tensor message goes and what it is; payload and CRC fields are filled in.
struct TensorMessage {
  MessageType type = MessageType::model_update;
  std::uint32_t sender = 0;
  std::uint64_t round = 0;
  std::uint64_t offset = 0;  // of values[0] in the arena
  std::uint8_t flags = 0;
};

/// Encodes values (+ residual, error feedback) with codec into payload and writes the
/// matching header. invalid_option for a non-tensor type or flags the type does not allow.
Error encode_tensor_message(const TensorMessage& message, Codec& codec, Span<const float> values,
                            Span<float> residual, std::vector<std::uint8_t>& header,
                            std::vector<std::uint8_t>& payload);

/// Decodes a parsed frame (parse_frame) into model[offset, offset + length): checks the
/// type, that codec matches the header, and that the range lies inside the model.
Error decode_tensor_message(const FrameHeader& header, ByteSpan payload, const Codec& codec, Span<float> model,
                            Apply apply);

/// Header of a gossip_pull request (empty payload).
void encode_gossip_pull(std::uint32_t sender, std::uint64_t round, std::vector<std::uint8_t>& header);

}  // namespace starling::protocols
