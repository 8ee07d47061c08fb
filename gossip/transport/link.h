#pragma once
// What carries a Transport's frames (gossip/transport/transport.h): the transport keeps the
// owner's side (routes, the inbox, the receive hook), a Link moves frames to other peers and
// puts the ones that pass the checks of admission.h into the transport's inbox. Two kinds:
// ZeroMQ sockets driven by an I/O thread (gossip/transport/zmq/), and peers of one process
// handing frames to each other in memory (gossip/transport/memory/). Each kind has its
// LinkFactory; transport_context.h chooses one.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gossip/transport/message.h"
#include "gossip/transport/payload.h"

namespace starling::gossip {

class Inbox;
class StatsRecorder;
struct TransportOptions;

/// The endpoint a peer behind NAT advertises: nobody can dial it. A reachable peer reaches it
/// over the connection it dials (a reverse route); a peer behind NAT itself reaches it through
/// a relay, any peer both have dialed (gossip/transport/zmq/relay_envelope.h).
inline constexpr const char* kBehindNat = "behind-nat";

class Link {
 public:
  virtual ~Link() = default;
  /// Where the link accepts frames (the bound endpoint, the port filled in).
  virtual const std::string& endpoint() const = 0;
  /// A route to `peer` at `endpoint` (kBehindNat: a reverse or relayed route), whose frames
  /// are accepted from now on; `server_key` is the peer's CURVE key (null without CURVE).
  /// Throws GossipError.
  virtual void connect(PeerId peer, const std::string& endpoint, const std::string* server_key) = 0;
  /// Accepts frames from `peer` from now on.
  virtual void accept(PeerId peer) = 0;
  /// Closes the route to `peer`, dropping what is still queued for it; none: nothing.
  virtual void disconnect(PeerId peer) = 0;
  /// Queues one encoded frame (header bytes, payload) on the route to a connected peer.
  virtual void send(PeerId to, Payload head, Payload payload) = 0;
  /// The periodic heartbeats go to these connected peers from now on.
  virtual void watch(std::vector<PeerId> peers) = 0;
  /// What the next heartbeats say: the owner's view and round.
  virtual void announce(std::uint64_t view, std::uint64_t round) = 0;
  /// Adds a client public key to the CURVE allow-list.
  virtual void admit(const std::string& public_key) = 0;
  /// Stops carrying frames and closes the inbox; idempotent. Throws TimeoutError when the
  /// link's thread did not acknowledge (after it has been joined).
  virtual void stop() = 0;
};

/// Opens the links of one kind, for the transports that share it (a ZeroMQ context, an
/// in-memory network); every link it opened must be gone before it is.
class LinkFactory {
 public:
  virtual ~LinkFactory() = default;
  /// The link of one transport (Transport's constructor calls it); IoError when its
  /// endpoint cannot be bound, InvalidArgument for options this kind cannot honour.
  virtual std::unique_ptr<Link> open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats) = 0;
};

}  // namespace starling::gossip
