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
//
// A state (the model, then the shared state beyond it) is digested in chunks, and its
// digest is the root over the chunk digests (StateManifest::root), so that a peer that
// fetches it from several others checks each chunk as it arrives against a list of chunk
// digests that it checked once against the agreed root (gossip/control/model_transfer.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

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

/// The largest chunk: 1 MiB of floats, the algorithms' segment size. A wrong chunk costs one
/// re-fetch of at most this much, and the list of digests costs 8 bytes per MiB of state.
inline constexpr std::size_t kMaxChunkFloats = std::size_t{1} << 18;
/// A state smaller than this many chunks of the largest size is cut into this many, so that
/// a small model is still spread over several seeders (and a wrong chunk found early)...
inline constexpr std::size_t kMinChunks = 16;
/// ...but no chunk is smaller than this: below it a frame's 48-byte header starts to count.
inline constexpr std::size_t kMinChunkFloats = 256;

/// Where a state's chunks lie. Each section (the model, the shared state) is cut on its own,
/// from its start, into chunks of chunk_floats (the last one shorter), so no chunk spans
/// both; chunks are numbered through the model's, then the shared state's.
struct ChunkLayout {
  std::uint64_t model_length = 0;
  std::uint64_t shared_length = 0;
  std::uint64_t chunk_floats = kMinChunkFloats;

  struct Place {
    bool shared = false;       // in the shared state's section (else the model's)
    std::uint64_t offset = 0;  // inside its section
    std::uint64_t length = 0;
  };
  std::size_t model_chunks() const;
  std::size_t count() const;
  /// Chunk `index` (< count()).
  Place place(std::size_t index) const;
  /// The chunk that begins at `offset` of its section, nullopt when none does.
  std::optional<std::size_t> index_of(bool shared, std::uint64_t offset) const;
  bool operator==(const ChunkLayout& o) const {
    return model_length == o.model_length && shared_length == o.shared_length && chunk_floats == o.chunk_floats;
  }
};

/// The layout every peer uses for a state of these lengths: chunks of
/// clamp(⌈total / kMinChunks⌉, kMinChunkFloats, kMaxChunkFloats) floats.
ChunkLayout chunk_layout(std::uint64_t model_length, std::uint64_t shared_length);

/// A state's chunk digests (digest_of each chunk), in the layout's order.
struct StateManifest {
  ChunkLayout layout;
  std::vector<std::uint64_t> digests;
  /// The state digest: a StateDigest over the layout's three numbers and the chunk digests.
  std::uint64_t root() const;
};

StateManifest state_manifest(Span<const float> model, Span<const float> shared);
/// The digest peers publish and compare for a state: state_manifest(model, shared).root().
std::uint64_t state_root(Span<const float> model, Span<const float> shared);

}  // namespace starling::protocols
