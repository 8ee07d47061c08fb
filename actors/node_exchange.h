#pragma once
// How the node mixes its central model z with the peers at an exchange point: strictly (the
// mix waited for, z ← mixed) or overlapped (the mix begun at the last exchange point arrives
// one exchange late, z ← z + (mixed − snapshot), and the next begins beside the learners).
// Plain functions on the node's state; the node actor decides when, and what follows.
#include "actors/node_actor.h"
#include "actors/node_schedule.h"  // Then

#include <cstdint>
#include <optional>

namespace starling::actors {

/// Overlapped (NodeSpec::overlap). A mix that moved this peer brought the job's model and
/// position, returned: nothing begins, and the next exchange point begins that round, in
/// step with the others. Counts the rounds completed. `measure` records how far the
/// arriving (or strict) mix moved its input: the metrics' consensus distance.
std::optional<gossip::Position> mix_overlapped(NodeState& s, bool measure, Then then, std::uint64_t iteration);

/// Strict, on the caller's thread while the learners are between orders (nobody reads z
/// meanwhile). `measure` costs a copy of z, so only the exchange before an evaluation does.
std::optional<gossip::Position> mix_strictly(NodeState& s, bool measure, std::uint64_t iteration);

}  // namespace starling::actors
