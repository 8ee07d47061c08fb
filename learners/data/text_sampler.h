#pragma once
// Training windows at seeded offsets: a learner's batch at step s is n windows of `window`
// bytes whose starts are drawn uniformly, with replacement, among every start its part
// offers (learners/data/text_partition.h), as nanoGPT draws its batches. Each start is a pure
// function of (seed, shard, step, position in the batch), so a resumed learner needs only
// its step count, and learners with distinct shards draw independently.
#include "learners/data/text_partition.h"

#include <cstdint>
#include <vector>

namespace starling {

class WindowSampler {
 public:
  /// Throws std::invalid_argument when `window` < 2 or the part offers no window.
  WindowSampler(TextPart part, int window, uint64_t seed, int shard = 0);

  int window() const { return window_; }
  /// Starts offered in all (the count that "an epoch" of windows is measured in).
  uint64_t starts() const { return cumulative_.back(); }
  /// The starts (offsets in TextCorpus::bytes()) of step `step`'s n windows.
  void batch(int64_t step, int n, uint64_t* starts) const;

 private:
  TextPart part_;
  int window_;
  uint64_t seed_;
  std::vector<uint64_t> cumulative_;  // cumulative_[i]: the starts ranges [0, i) offer
};

}  // namespace starling
