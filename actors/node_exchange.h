#pragma once
// The node's side of the exchange with other peers, and how it mixes its central model z
// with theirs at an exchange point: strictly (the mix waited for, z ← mixed) or overlapped
// (the mix begun at the last exchange point arrives one exchange late,
// z ← z + (mixed − snapshot), and the next begins beside the learners). Plain functions on
// the node's state; the node's schedule decides when, and what follows.
#include "actors/node_schedule.h"  // Then
#include "gossip/overlapped_exchange.h"
#include "gossip/peer_exchange.h"
#include "learners/models/aligned_buffer.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace starling::actors {

struct NodeState;

/// The exchange in use, the rounds it completed and the bytes it moved (a resumed run's
/// included), and what the metrics report of it.
struct NodePeers {
  std::unique_ptr<gossip::PeerExchange> strict_exchange;  // mixes z itself while the learners wait
  std::unique_ptr<gossip::OverlappedExchange> overlap;   // or snapshots of z beside their steps
  gossip::PeerExchange* exchange = nullptr;  // the one of the two in use; null for a single node
  uint64_t exchanges = 0;                    // rounds completed so far: the peers' round counter
  uint64_t bytes_sent_before = 0, bytes_received_before = 0;  // by the run a checkpoint continues
  double compute_since_exchange = 0.0;       // the slowest learner's compute since the last exchange
  std::optional<double> consensus_distance;  // of the last measured exchange
  AlignedBuffer<float> z_before;             // z before a measured strict exchange
  std::optional<int64_t> joined_at_step;     // a peer that joined a running job: where

  /// By this peer and the run it continues; 0 for a single node.
  uint64_t bytes_sent() const { return exchange ? exchange->bytes_sent() + bytes_sent_before : 0; }
  uint64_t bytes_received() const { return exchange ? exchange->bytes_received() + bytes_received_before : 0; }
  /// A mix begun beside the compute at the last exchange point has not landed yet.
  bool mix_in_flight() const { return overlap && overlap->pending(); }
};

/// Overlapped (NodeSpec::overlap). A mix that moved this peer brought the job's model and
/// position, returned: nothing begins, and the next exchange point begins that round, in
/// step with the others. Counts the rounds completed. `measure` records how far the
/// arriving (or strict) mix moved its input: the metrics' consensus distance.
std::optional<gossip::Position> mix_overlapped(NodeState& s, bool measure, Then then, std::uint64_t iteration);

/// Strict, on the caller's thread while the learners are between orders (nobody reads z
/// meanwhile). `measure` costs a copy of z, so only the exchange before an evaluation does.
std::optional<gossip::Position> mix_strictly(NodeState& s, bool measure, std::uint64_t iteration);

}  // namespace starling::actors
