// The interface's boundary (gossip/algorithms/sync_algorithm.h): a round's aborts turned into
// results, and the state a pairwise algorithm checkpoints.
#include "gossip/algorithms/sync_algorithm.h"

#include <algorithm>

#include "gossip/transport/error.h"

namespace starling::gossip {

RoundResult SyncAlgorithm::run(double compute_seconds, std::uint64_t iteration) {
  iteration_ = iteration;
  try {
    round(compute_seconds);
    return {};
  } catch (const MembershipChanged& e) {
    return {RoundResult::membership_changed, e.what()};
  } catch (const TimeoutError& e) {
    return {RoundResult::timed_out, e.what()};
  }
}

bool SyncAlgorithm::restore(const std::vector<float>& values) { return values.empty(); }

std::vector<float> PairState::values() const {
  if (!started) return {};
  std::vector<float> values(first);
  values.insert(values.end(), second.begin(), second.end());
  return values;
}

bool PairState::restore(const std::vector<float>& values) {
  const std::size_t n = first.size();
  if (values.size() != n + second.size()) return false;
  std::copy(values.begin(), values.begin() + static_cast<long>(n), first.begin());
  std::copy(values.begin() + static_cast<long>(n), values.end(), second.begin());
  started = true;
  return true;
}

}  // namespace starling::gossip
