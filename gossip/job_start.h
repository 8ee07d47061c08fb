#pragma once
// How a peer that starts tells a fresh job from one already running: it listens to the
// heartbeats of the others (membership.h: each names its sender's view and round). A peer
// heard in a later view, or at a later round than this one's, means the job went on
// without this peer, which must then join it rather than start it with the others.
#include <cstdint>
#include <vector>

#include "gossip/transport.h"

namespace starling::gossip {

enum class JobState { fresh, running };

/// Waits until every peer of `peers` but this one has sent a heartbeat, one of them turns
/// out to be further along than view 0 and `round`, or the deadline passes (fresh: the
/// silent ones are left to failure detection). Messages that arrive meanwhile are put back.
JobState await_job(Transport& transport, const std::vector<PeerId>& peers, std::uint64_t round,
                   Transport::Clock::time_point deadline);

}  // namespace starling::gossip
