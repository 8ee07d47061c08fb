// State transfer for joining peers (protocols/state_transfer.h).
#include "protocols/state_transfer.h"

#include "protocols/byte_io.h"
#include "protocols/codecs/dense_codec.h"

namespace starling::protocols {
namespace {
constexpr std::size_t kSectionHeader = 16;
}

Error encode_state_chunk(const StateChunk& chunk, Span<const float> section, std::vector<std::uint8_t>& header,
                         std::vector<std::uint8_t>& payload) {
  if (chunk.offset > section.size() || chunk.length > section.size() - chunk.offset) return Error::invalid_option;
  codecs::DenseCodec codec(codecs::kFp32);
  std::vector<float> zero(chunk.length, 0.0f);  // lossless: nothing is left behind
  std::vector<std::uint8_t> body;
  if (Error e = codec.encode(section.subspan(chunk.offset, chunk.length), zero, body); e != Error::ok) return e;
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint32_t>(static_cast<std::uint32_t>(chunk.section));
  w.write<std::uint32_t>(0);
  w.write<std::uint64_t>(section.size());
  w.write_bytes(body.data(), body.size());
  FrameHeader h;
  h.type = MessageType::state_transfer;
  h.codec = CodecId::none;
  h.flags = chunk.last ? kFlagLastChunk : 0;
  h.sender = chunk.sender;
  h.round = chunk.round;
  h.tensor_offset = chunk.offset;
  h.tensor_length = chunk.length;
  encode_header_for(h, payload, header);
  return Error::ok;
}

Result<StateChunk> decode_state_chunk(const FrameHeader& header, ByteSpan payload, Span<float> section) {
  if (header.type != MessageType::state_transfer) return Error::bad_header;
  if (header.codec != CodecId::none) return Error::codec_mismatch;
  ByteReader r(payload);
  const std::uint32_t kind = r.read<std::uint32_t>();
  const std::uint32_t reserved = r.read<std::uint32_t>();
  const std::uint64_t length = r.read<std::uint64_t>();
  if (!r.ok()) return Error::truncated;
  if (reserved != 0 || kind > static_cast<std::uint32_t>(StateSection::optimizer)) return Error::bad_parameter;
  if (length != section.size()) return Error::length_mismatch;
  if (header.tensor_offset > length || header.tensor_length > length - header.tensor_offset)
    return Error::tensor_out_of_range;
  codecs::DenseCodec codec(codecs::kFp32);
  Span<float> dest = section.subspan(header.tensor_offset, header.tensor_length);
  if (Error e = codec.decode(payload.subspan(kSectionHeader), dest, Apply::assign); e != Error::ok) return e;
  StateChunk chunk;
  chunk.sender = header.sender;
  chunk.round = header.round;
  chunk.section = static_cast<StateSection>(kind);
  chunk.offset = header.tensor_offset;
  chunk.length = header.tensor_length;
  chunk.last = (header.flags & kFlagLastChunk) != 0;
  return chunk;
}

}  // namespace starling::protocols
