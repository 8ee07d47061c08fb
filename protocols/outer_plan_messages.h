#pragma once
// The outer_plan message of deferred outer steps (gossip/algorithms/deferred_outer_sync.h):
// with its pseudo-gradient for a round, a member tells the view's other members which round
// its next one is for, so that every member knows, at every round, whose pseudo-gradients
// that round's outer step averages. The header's round is the (view-tagged) round the
// pseudo-gradient that follows is for; it carries no tensor.
//
//  outer_plan payload (little-endian, 32 bytes):
//  +--------+------+-----------------------------------------------------------------+
//  |      0 |    8 | base: the round whose start model the pseudo-gradient is from    |
//  |      8 |    8 | next: the round the sender's next pseudo-gradient is for;        |
//  |        |      | kNoMoreRounds once it has finished                               |
//  |     16 |    8 | the iteration of the sender's model                              |
//  |     24 |    8 | the sender's compute seconds for this pseudo-gradient (float64)  |
//  +--------+------+-----------------------------------------------------------------+
#include <cstdint>
#include <limits>
#include <vector>

#include "protocols/error.h"
#include "protocols/span.h"

namespace starling::protocols {

inline constexpr std::size_t kOuterPlanPayloadSize = 32;
inline constexpr std::uint64_t kNoMoreRounds = std::numeric_limits<std::uint64_t>::max();

struct OuterPlan {
  std::uint64_t base = 0;
  std::uint64_t next = 0;
  std::uint64_t iteration = 0;
  double compute_seconds = 0.0;
};

void encode_outer_plan(const OuterPlan& plan, std::vector<std::uint8_t>& payload);
/// truncated or oversized unless the payload is exactly kOuterPlanPayloadSize bytes;
/// invalid_option for compute seconds that are negative or not finite.
Result<OuterPlan> decode_outer_plan(ByteSpan payload);

}  // namespace starling::protocols
