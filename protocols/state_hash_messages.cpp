// The state_hash payload (protocols/state_hash_messages.h).
#include "protocols/state_hash_messages.h"

#include "protocols/byte_io.h"

namespace starling::protocols {

void encode_state_hash(const StateHash& hash, std::vector<std::uint8_t>& payload) {
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint64_t>(hash.digest);
  w.write<std::uint64_t>(hash.view);
  w.write<std::uint64_t>(hash.iteration);
}

Result<StateHash> decode_state_hash(ByteSpan payload) {
  if (payload.size() < kStateHashPayloadSize) return Error::truncated;
  if (payload.size() > kStateHashPayloadSize) return Error::oversized;
  ByteReader r(payload);
  StateHash hash;
  hash.digest = r.read<std::uint64_t>();
  hash.view = r.read<std::uint64_t>();
  hash.iteration = r.read<std::uint64_t>();
  return hash;
}

}  // namespace starling::protocols
