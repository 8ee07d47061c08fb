// The state-transfer family's messages (protocols/state_transfer.h).
#include "protocols/state_transfer.h"

#include "protocols/byte_io.h"
#include "protocols/codecs/dense_codec.h"

namespace starling::protocols {
namespace {
constexpr std::size_t kSectionHeader = 16;
constexpr std::size_t kRequestSize = 16;
constexpr std::size_t kManifestHeader = 24;
constexpr std::uint32_t kRequestDigests = 1u << 0;
constexpr std::uint32_t kRequestShared = 1u << 1;
// Longer sections than this are no model (2^40 floats, 4 TiB): it keeps the sums of lengths
// from wrapping around.
constexpr std::uint64_t kMaxSectionLength = std::uint64_t{1} << 40;
}  // namespace

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

void encode_state_request(const StateRequest& request, std::vector<std::uint8_t>& payload) {
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint32_t>((request.digests ? kRequestDigests : 0) | (request.shared ? kRequestShared : 0));
  w.write<std::uint32_t>(request.count);
  w.write<std::uint64_t>(request.first);
}

Result<StateRequest> decode_state_request(ByteSpan payload) {
  ByteReader r(payload);
  const std::uint32_t flags = r.read<std::uint32_t>();
  StateRequest request;
  request.count = r.read<std::uint32_t>();
  request.first = r.read<std::uint64_t>();
  if (!r.ok()) return Error::truncated;
  if (payload.size() > kRequestSize) return Error::oversized;
  if (flags & ~(kRequestDigests | kRequestShared)) return Error::bad_parameter;
  request.digests = (flags & kRequestDigests) != 0;
  request.shared = (flags & kRequestShared) != 0;
  if (!request.digests && request.count == 0) return Error::bad_parameter;
  if (request.first + request.count < request.first) return Error::tensor_out_of_range;
  return request;
}

void encode_state_manifest(const StateManifest& manifest, std::vector<std::uint8_t>& payload) {
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint64_t>(manifest.layout.model_length);
  w.write<std::uint64_t>(manifest.layout.shared_length);
  w.write<std::uint64_t>(manifest.layout.chunk_floats);
  for (std::uint64_t digest : manifest.digests) w.write<std::uint64_t>(digest);
}

Result<StateManifest> decode_state_manifest(ByteSpan payload) {
  ByteReader r(payload);
  StateManifest m;
  m.layout.model_length = r.read<std::uint64_t>();
  m.layout.shared_length = r.read<std::uint64_t>();
  m.layout.chunk_floats = r.read<std::uint64_t>();
  if (!r.ok()) return Error::truncated;
  if (m.layout.model_length > kMaxSectionLength || m.layout.shared_length > kMaxSectionLength)
    return Error::bad_parameter;
  if (m.layout.chunk_floats != chunk_layout(m.layout.model_length, m.layout.shared_length).chunk_floats)
    return Error::bad_parameter;
  const std::size_t digests = payload.size() - kManifestHeader;
  if (digests % sizeof(std::uint64_t) != 0 || digests / sizeof(std::uint64_t) != m.layout.count())
    return Error::length_mismatch;
  m.digests.resize(m.layout.count());
  for (std::uint64_t& digest : m.digests) digest = r.read<std::uint64_t>();
  return m;
}

}  // namespace starling::protocols
