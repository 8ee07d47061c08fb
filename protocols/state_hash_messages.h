#pragma once
// The state_hash message: after a synchronous round every member tells the view's other
// members the digest (state_digest.h) of the shared state that round left it with, so that
// each can check they all hold the same bits (gossip/control/state_hashes.h). The header's
// round is the round the digest was taken after (the exchange's round count, not tagged
// with the view); it carries no tensor: codec, tensor offset and length, and flags are zero.
//
//  state_hash payload (little-endian, 24 bytes):
//  +--------+------+-----------------------------------------------+
//  |      0 |    8 | digest of the shared state after the round     |
//  |      8 |    8 | the view the round ran in                      |
//  |     16 |    8 | the iteration of the model the round produced  |
//  +--------+------+-----------------------------------------------+
#include <cstdint>
#include <vector>

#include "protocols/error.h"
#include "protocols/span.h"

namespace starling::protocols {

inline constexpr std::size_t kStateHashPayloadSize = 24;

struct StateHash {
  std::uint64_t digest = 0;
  std::uint64_t view = 0;
  std::uint64_t iteration = 0;
};

void encode_state_hash(const StateHash& hash, std::vector<std::uint8_t>& payload);
/// truncated or oversized unless the payload is exactly kStateHashPayloadSize bytes.
Result<StateHash> decode_state_hash(ByteSpan payload);

}  // namespace starling::protocols
