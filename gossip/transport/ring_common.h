#pragma once
// What the ring algorithms (all-reduce, all-gather) share: where this peer sits in a ring
// of peer ids (its rank, the ring's size and both neighbours, after checking that the ring
// can carry an exchange from here), and taking the next message of a round when messages
// of later rounds may have been set aside.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "gossip/transport/error.h"
#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"

namespace starling::gossip {

struct RingPosition {
  int size = 1;
  int rank = 0;
  PeerId left = 0;
  PeerId right = 0;
};

/// InvalidArgument when the transport's own id is missing from ring, ring lists a peer
/// twice, or the right neighbour is not connected.
inline RingPosition ring_position(const Transport& transport, const std::vector<PeerId>& ring) {
  RingPosition at;
  at.size = static_cast<int>(ring.size());
  const auto self = std::find(ring.begin(), ring.end(), transport.self());
  if (self == ring.end()) STARLING_GOSSIP_THROW(InvalidArgument, "own peer id is not in the ring");
  if (std::set<PeerId>(ring.begin(), ring.end()).size() != ring.size())
    STARLING_GOSSIP_THROW(InvalidArgument, "ring lists a peer twice");
  at.rank = static_cast<int>(self - ring.begin());
  at.left = ring[(at.rank + at.size - 1) % at.size];
  at.right = ring[(at.rank + 1) % at.size];
  if (at.size > 1 && !transport.connected_to(at.right))
    STARLING_GOSSIP_THROW(InvalidArgument, "not connected to right neighbour " + std::to_string(at.right));
  return at;
}

/// Bound on the messages of later rounds a ring algorithm sets aside.
inline constexpr std::size_t kMaxEarlyMessages = 1u << 16;

/// The oldest message set aside in `early` if it belongs to `round`, else the transport's
/// next one (TimeoutError at the deadline).
inline Message next_message(std::deque<Message>& early, std::uint64_t round, Transport& transport,
                            Transport::Clock::time_point deadline) {
  if (early.empty() || early.front().header.round != round) return transport.receive(deadline);
  Message m = std::move(early.front());
  early.pop_front();
  return m;
}

}  // namespace starling::gossip
