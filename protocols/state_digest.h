#pragma once
// The 64-bit digest peers compare to check that they hold bit-identical shared state after
// a synchronous round (gossip/control/state_hashes.h). Not cryptographic: it guards against
// faults (a flipped bit, a diverging computation), not against a peer that lies.
//
// Its two halves are independent functions of the bytes:
//  - high 32 bits: CRC-32C (crc32c.h, the hardware path), which changes for certain on any
//    single flipped bit and any burst of up to 32 flipped bits;
//  - low 32 bits: a multiply-rotate mix of the 8-byte words in four lanes (xxHash64's
//    round and avalanche), which is not linear, so a change that leaves the CRC alone (a
//    multiple of its polynomial) still changes it with probability 1 − 2⁻³².
// Two CRC-32Cs would not do: CRC is linear, so a second one (another seed, another order)
// misses exactly the changes the first misses.
#include <cstddef>
#include <cstdint>

#include "protocols/span.h"

namespace starling::protocols {

class StateDigest {
 public:
  /// Adds the bytes of `values` (the digest of a sequence of spans depends on where each
  /// begins, so x₀ ‖ u and u ‖ x₀ differ).
  void add(Span<const float> values);
  void add(const void* data, std::size_t size);
  std::uint64_t value() const;

 private:
  std::uint32_t crc_ = 0;
  std::uint64_t mix_ = 0;  // the mix of every span added so far
};

/// The digest of one span.
std::uint64_t digest_of(Span<const float> values);

}  // namespace starling::protocols
