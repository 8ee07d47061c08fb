// Tensor-carrying messages (protocols/tensor_messages.h).
#include "protocols/tensor_messages.h"

namespace starling::protocols {

Error encode_tensor_message(const TensorMessage& message, Codec& codec, Span<const float> values,
                            Span<float> residual, std::vector<std::uint8_t>& header,
                            std::vector<std::uint8_t>& payload) {
  if (!carries_tensor(message.type) || (message.flags & ~allowed_flags(message.type))) return Error::invalid_option;
  if (Error e = codec.encode(values, residual, payload); e != Error::ok) return e;
  FrameHeader h;
  h.type = message.type;
  h.codec = codec.id();
  h.flags = message.flags;
  h.sender = message.sender;
  h.round = message.round;
  h.tensor_offset = message.offset;
  h.tensor_length = values.size();
  encode_header_for(h, payload, header);
  return Error::ok;
}

Error decode_tensor_message(const FrameHeader& header, ByteSpan payload, const Codec& codec, Span<float> model,
                            Apply apply) {
  if (!carries_tensor(header.type)) return Error::bad_header;
  if (header.codec != codec.id()) return Error::codec_mismatch;
  if (header.tensor_offset > model.size() || header.tensor_length > model.size() - header.tensor_offset)
    return Error::tensor_out_of_range;
  return codec.decode(payload, model.subspan(header.tensor_offset, header.tensor_length), apply);
}

void encode_gossip_pull(std::uint32_t sender, std::uint64_t round, std::vector<std::uint8_t>& header) {
  FrameHeader h;
  h.type = MessageType::gossip_pull;
  h.sender = sender;
  h.round = round;
  encode_header_for(h, ByteSpan{}, header);
}

}  // namespace starling::protocols
