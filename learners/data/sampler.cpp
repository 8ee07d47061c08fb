#include "learners/data/sampler.h"

#include <numeric>
#include <random>
#include <stdexcept>

namespace starling {
namespace {

std::vector<uint32_t> iota_pool(uint32_t count) {
  std::vector<uint32_t> pool(count);
  std::iota(pool.begin(), pool.end(), 0u);
  return pool;
}

}  // namespace

uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Sampler::Sampler(uint32_t count, uint64_t seed, int shard, int shards) : Sampler(iota_pool(count), seed, shard, shards) {}

Sampler::Sampler(std::vector<uint32_t> pool, uint64_t seed, int shard, int shards)
    : pool_(std::move(pool)), seed_(seed), shard_(shard), shards_(shards) {
  if (shards < 1 || shard < 0 || shard >= shards) throw std::invalid_argument("sampler: shard out of range");
  if (pool_.size() < static_cast<std::size_t>(shards)) throw std::invalid_argument("sampler: fewer samples than shards");
}

uint32_t Sampler::shard_size() const {
  const auto count = static_cast<uint32_t>(pool_.size());
  return count / shards_ + (static_cast<uint32_t>(shard_) < count % shards_ ? 1 : 0);
}

const std::vector<uint32_t>& Sampler::epoch(int64_t epoch) {
  if (epoch == cached_epoch_) return indices_;
  const auto count = static_cast<uint32_t>(pool_.size());
  std::vector<uint32_t> perm = pool_;
  // Fisher–Yates with our own draw so the order is the same under every standard library.
  std::mt19937_64 rng(mix_seed(seed_, static_cast<uint64_t>(epoch)));
  for (uint32_t i = count - 1; i > 0; --i) std::swap(perm[i], perm[rng() % (uint64_t{i} + 1)]);
  indices_.clear();
  indices_.reserve(shard_size());
  for (uint32_t p = static_cast<uint32_t>(shard_); p < count; p += static_cast<uint32_t>(shards_)) indices_.push_back(perm[p]);
  cached_epoch_ = epoch;
  return indices_;
}

}  // namespace starling
