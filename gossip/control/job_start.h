#pragma once
// How a peer that starts tells a fresh job from one already running: it listens to the
// heartbeats of the others (membership.h: each names its sender's view and round).
//
// Every peer of the config is a member of view 0, so a peer that has never trained is a
// start participant, not a joiner, for as long as the job is in view 0: the members that
// went ahead cannot leave it behind, since a round needs its neighbours' data and a peer
// is at most one round ahead of each of its neighbours (no more than `reach` rounds, the
// topology's diameter, ahead of this one). What shows that the job went on without this
// peer is a view the others agreed on without it: a heartbeat naming a view above 0, or a
// round further ahead than any view-0 member could be while this one had not started.
// Taking round > 0 for "running" instead turned a slow start into a crowd of joiners that
// no member admitted, because the members were still waiting for them in view 0.
//
// A view change away from view 0 that begins while this peer waits (the members exclude a
// peer never heard from) needs this peer's status as a member of view 0: the wait ends
// then, so that the caller takes part in it rather than keep the change waiting. One that
// names a later view shows that the job runs.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "gossip/transport/transport.h"

namespace starling::gossip {

enum class JobState { fresh, running };

struct JobStart {
  std::vector<PeerId> peers;  // every peer of the config, this one included
  std::uint64_t round = 0;    // the round this peer starts at
  /// How far past `round` a member of view 0 may be while this one has not started (0: any
  /// peer ahead means the job runs, for the modes without views).
  std::uint64_t reach = 0;
  /// Peers (this one included) that must have been heard before the start may go on
  /// without the silent rest; fewer cannot form a job (exchange.min_peers).
  std::size_t quorum = 0;
  /// Every peer is waited for until none new has been heard for this long (the start
  /// timeout): peers started one after another, however many, all take part in the start.
  Transport::Clock::duration patience{};
  /// After that, a quorum is waited for as long again; then the wait ends regardless
  /// (fresh: the exchange reports that too few peers live).
  Transport::Clock::duration quorum_patience{};
  /// The view a view change that concerns this peer names (the view it starts from, or
  /// decides), once one has begun; may be empty. Above 0 the job runs; in view 0 this peer
  /// takes part once `confirm` has passed without a heartbeat that says otherwise (a
  /// restarted peer may first be handed messages queued for its previous run).
  std::function<std::optional<std::uint64_t>()> view_change_begun;
  Transport::Clock::duration confirm{};
};

/// Waits until every other peer of `start.peers` (the peers this one watches) has sent a
/// heartbeat (fresh), one of them shows that the job runs without this peer (running; see
/// above), a view change begins (fresh), or the patience described in JobStart runs out
/// (fresh: the silent ones are left to failure detection). Messages that arrive meanwhile
/// are put back.
JobState await_job(Transport& transport, const JobStart& start);

}  // namespace starling::gossip
