#pragma once
// Who watches whom: the monitoring overlay of a job's control plane. Peer i of
// the ring order watches the peers 2^k places before and after it (k = 0, 1, ... while
// 2^k < n), so each peer watches and is watched by at most 2·⌈log2 n⌉ others, the relation
// is symmetric (heartbeats go both ways), and the overlay's diameter is O(log n): a death
// that its watchers detect reaches every live peer in O(log n) hops (membership.h). Up to
// 5 peers this is everyone (as the four-peer fault tests run).
#include <vector>

#include "gossip/transport/message.h"

namespace starling::gossip {

/// The peers `self` watches among `ring` (which holds it; ids in ring order), ascending,
/// without itself. Every other peer when `self` is not in the ring.
std::vector<PeerId> watch_overlay(const std::vector<PeerId>& ring, PeerId self);

}  // namespace starling::gossip
