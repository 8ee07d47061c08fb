#pragma once
// Seeded, per-epoch shuffling with sharding: every shard sees the same permutation of its
// pool for an epoch and takes every shards-th position from offset `shard`, so shards are
// disjoint and together cover the pool. The pool is the whole dataset (iid: shard = peer ·
// learners + learner) or a peer's part of a partition (learners/data/partition.h: shard = learner).
#include <cstdint>
#include <vector>

namespace starling {

class Sampler {
 public:
  /// Draws from [0, count).
  Sampler(uint32_t count, uint64_t seed, int shard = 0, int shards = 1);
  /// Draws from `pool`; with pool = 0, 1, ..., count - 1 exactly as the constructor above.
  Sampler(std::vector<uint32_t> pool, uint64_t seed, int shard = 0, int shards = 1);

  uint32_t shard_size() const;
  /// This shard's indices for `epoch`, in shuffled order; same seed and epoch, same order.
  const std::vector<uint32_t>& epoch(int64_t epoch);

 private:
  std::vector<uint32_t> pool_;
  uint64_t seed_;
  int shard_, shards_;
  int64_t cached_epoch_ = -1;
  std::vector<uint32_t> indices_;
};

/// splitmix64: decorrelates seeds derived from (seed, epoch, learner, ...).
uint64_t mix_seed(uint64_t a, uint64_t b);

}  // namespace starling
