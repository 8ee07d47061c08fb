// The shared-state digest (protocols/state_digest.h).
#include "protocols/state_digest.h"

#include <algorithm>
#include <cstring>

#include "protocols/crc32c.h"

namespace starling::protocols {
namespace {

// xxHash64's primes.
constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;

std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

std::uint64_t round_of(std::uint64_t lane, std::uint64_t word) { return rotl(lane + word * kPrime2, 31) * kPrime1; }

std::uint64_t load(const unsigned char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

std::uint64_t avalanche(std::uint64_t h) {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

// Four independent lanes keep four multiplies in flight; the tail goes word by word into
// the folded value, its last bytes zero-padded (the length is mixed in, so padding cannot
// collide with real zeros).
std::uint64_t mix_bytes(const unsigned char* p, std::size_t size) {
  std::uint64_t v[4] = {kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1};
  std::size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int k = 0; k < 4; ++k) v[k] = round_of(v[k], load(p + i + 8 * k));
  std::uint64_t h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
  for (int k = 0; k < 4; ++k) h = (h ^ round_of(0, v[k])) * kPrime1 + kPrime4;
  h += size;
  for (; i + 8 <= size; i += 8) h = rotl(h ^ round_of(0, load(p + i)), 27) * kPrime1 + kPrime4;
  if (i < size) {
    unsigned char last[8] = {};
    std::memcpy(last, p + i, size - i);
    h = rotl(h ^ round_of(0, load(last)), 27) * kPrime1 + kPrime4;
  }
  return avalanche(h);
}

}  // namespace

void StateDigest::add(Span<const float> values) { add(values.data(), values.size() * sizeof(float)); }

void StateDigest::add(const void* data, std::size_t size) {
  crc_ = crc32c(data, size, crc_);
  mix_ = avalanche(rotl(mix_, 29) ^ mix_bytes(static_cast<const unsigned char*>(data), size));
}

std::uint64_t StateDigest::value() const {
  return (static_cast<std::uint64_t>(crc_) << 32) | static_cast<std::uint32_t>(mix_ ^ (mix_ >> 32));
}

std::uint64_t digest_of(Span<const float> values) {
  StateDigest d;
  d.add(values);
  return d.value();
}

std::size_t ChunkLayout::model_chunks() const {
  return static_cast<std::size_t>((model_length + chunk_floats - 1) / chunk_floats);
}

std::size_t ChunkLayout::count() const {
  return model_chunks() + static_cast<std::size_t>((shared_length + chunk_floats - 1) / chunk_floats);
}

ChunkLayout::Place ChunkLayout::place(std::size_t index) const {
  Place p;
  p.shared = index >= model_chunks();
  const std::uint64_t section = p.shared ? shared_length : model_length;
  p.offset = (p.shared ? index - model_chunks() : index) * chunk_floats;
  p.length = std::min<std::uint64_t>(chunk_floats, section - p.offset);
  return p;
}

std::optional<std::size_t> ChunkLayout::index_of(bool shared, std::uint64_t offset) const {
  if (offset % chunk_floats != 0 || offset >= (shared ? shared_length : model_length)) return std::nullopt;
  return static_cast<std::size_t>(offset / chunk_floats) + (shared ? model_chunks() : 0);
}

ChunkLayout chunk_layout(std::uint64_t model_length, std::uint64_t shared_length) {
  const std::uint64_t total = model_length + shared_length;
  ChunkLayout layout;
  layout.model_length = model_length;
  layout.shared_length = shared_length;
  layout.chunk_floats = std::clamp<std::uint64_t>((total + kMinChunks - 1) / kMinChunks, kMinChunkFloats, kMaxChunkFloats);
  return layout;
}

std::uint64_t StateManifest::root() const {
  const std::uint64_t numbers[3] = {layout.model_length, layout.shared_length, layout.chunk_floats};
  StateDigest d;
  d.add(numbers, sizeof numbers);
  d.add(digests.data(), digests.size() * sizeof(std::uint64_t));
  return d.value();
}

StateManifest state_manifest(Span<const float> model, Span<const float> shared) {
  StateManifest m;
  m.layout = chunk_layout(model.size(), shared.size());
  m.digests.resize(m.layout.count());
  for (std::size_t i = 0; i < m.digests.size(); ++i) {
    const ChunkLayout::Place p = m.layout.place(i);
    m.digests[i] = digest_of((p.shared ? shared : model).subspan(p.offset, p.length));
  }
  return m;
}

std::uint64_t state_root(Span<const float> model, Span<const float> shared) {
  return state_manifest(model, shared).root();
}

}  // namespace starling::protocols
