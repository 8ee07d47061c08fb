// Seeded window offsets over a peer's ranges (learners/data/text_sampler.h).
#include "learners/data/text_sampler.h"

#include "learners/data/sampler.h"

#include <algorithm>
#include <stdexcept>

namespace starling {

WindowSampler::WindowSampler(TextPart part, int window, uint64_t seed, int shard)
    : part_(std::move(part)), window_(window), seed_(mix_seed(seed, static_cast<uint64_t>(shard))), cumulative_{0} {
  if (window < 2) throw std::invalid_argument("text sampler: a window needs at least two bytes");
  for (const TextRange& r : part_) cumulative_.push_back(cumulative_.back() + window_starts({r}, window));
  if (cumulative_.back() == 0)
    throw std::invalid_argument("text sampler: the peer's text holds no window of " + std::to_string(window) + " bytes");
}

void WindowSampler::batch(int64_t step, int n, uint64_t* starts) const {
  const uint64_t total = cumulative_.back(), step_seed = mix_seed(seed_, static_cast<uint64_t>(step));
  for (int i = 0; i < n; ++i) {
    // A 64-bit draw modulo total: the bias is below total / 2^64, far under any effect.
    const uint64_t k = mix_seed(step_seed, static_cast<uint64_t>(i)) % total;
    // The range holding the k-th start: the last r with cumulative_[r] <= k.
    const auto r = static_cast<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), k) - cumulative_.begin()) - 1;
    starts[i] = part_[r].begin + (k - cumulative_[r]);
  }
}

}  // namespace starling
