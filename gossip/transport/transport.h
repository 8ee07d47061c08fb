#pragma once
// A peer's transport: it binds one endpoint, reaches each neighbour through a route opened
// by connect() or, for a peer of the directory, on demand at the first send to it (a peer
// holds routes only to the peers it talks to), and hands its owner validated messages. What
// carries the frames is a link (link.h) from the factory it was made with: ZeroMQ sockets
// owned by an I/O thread (gossip/transport/zmq/), or, for the peers of one process, memory
// (gossip/transport/memory/); TransportContext chooses (transport_context.h). Everything
// below holds for both. Use it from one thread; incoming messages arrive in a
// thread-safe Inbox. Every message is a header frame + payload frame (protocols/frame.h);
// invalid ones are dropped and counted per reason, never raised (admission.h). Every wait
// has a deadline and ends in TimeoutError; link failures raise IoError. Over ZeroMQ, the
// first Transport of a process keeps message-sized buffers in glibc's heap
// (gossip/transport/zmq/buffer_heap.h).
//
// Security (optional, TransportOptions::curve; ZeroMQ only): the ROUTER is a CURVE server admitting only
// allow-listed client keys (an open swarm's: every key) through the context's ZAP handler
// (gossip/transport/zmq/zap_handler.h), each DEALER a CURVE client that authenticates the
// neighbour by its public key, and what goes through a relay travels in a box between the two
// ends (gossip/transport/zmq/relay_box.h). Refused strangers are counted in stats().drops:
// "zap_refused" (key not on the allow-list), "handshake_failed_protocol" (no CURVE or a broken
// handshake), "key_mismatch" (an admitted key claiming another peer's id), "relay_box_failed"
// and "relay_replayed" (a relay's forgery or replay). Nothing from a refused connection
// reaches the inbox.
//
// Liveness (TransportOptions::heartbeat_interval): the link heartbeats the peers the
// owner watches (watch(); every connected peer until then) and records when it last heard
// each (liveness()), so failure detection does not depend on the owner being free to answer. Caps (max_messages_per_second, limits) and the
// raw fp32 check (a gossip_push, gossip_pull_reply or allreduce_segment of codec none whose
// payload is tensor_length floats must hold finite ones) are applied there too; admission.h.
//
// A ReceiveHook, when set, sees every message before receive()/try_receive() returns it and
// is called while they wait: the owner's control plane (membership, view changes) runs
// there, inside whatever algorithm is receiving, and may abort the wait by throwing.
#include <chrono>
#include <cstdint>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gossip/transport/curve.h"
#include "gossip/transport/inbox.h"
#include "gossip/transport/link.h"
#include "gossip/transport/message.h"
#include "gossip/transport/payload.h"
#include "gossip/transport/transport_stats.h"
#include "protocols/frame.h"
#include "protocols/span.h"

namespace starling::gossip {

struct TransportOptions {
  PeerId self = 0;
  /// Where the ROUTER binds, e.g. "tcp://127.0.0.1:5555"; "tcp://127.0.0.1:*" picks a free port.
  std::string bind_endpoint = "tcp://127.0.0.1:*";
  /// Peers whose messages are accepted from the start (the membership allow-list). Peers
  /// added later by connect() or accept_from() are accepted only from then on, so a sender
  /// must be known before it starts sending or its first messages count as unknown_sender.
  std::vector<PeerId> accept;
  /// Where each peer accepts connections: send() and watch() connect to these on demand.
  std::map<PeerId, std::string> directory;
  int send_hwm = 10000;     // messages queued per DEALER before the I/O thread holds them back
  int receive_hwm = 10000;  // messages queued per incoming connection
  int socket_buffer_bytes = 0;  // SO_SNDBUF/SO_RCVBUF of TCP connections; 0 = OS default
  int linger_ms = 2000;     // how long closing waits to deliver messages already queued
  std::size_t inbox_limit_bytes = std::size_t{1} << 30;  // stop reading the network beyond this
  std::chrono::milliseconds command_timeout{5000};       // connect/accept/stop acknowledgements
  protocols::FrameLimits limits;
  /// Lets hello messages from senders not yet accepted through (a seed answering joins);
  /// every other type from them still counts as unknown_sender.
  bool accept_unknown_hello = false;
  /// CURVE encryption and the ZAP allow-list; plain TCP when absent.
  std::optional<CurveSecurity> curve;
  /// The I/O thread heartbeats every connected peer this often; 0: it sends none.
  std::chrono::milliseconds heartbeat_interval{0};
  /// Messages accepted per second from one sender (a one-second burst); 0: no cap.
  std::uint32_t max_messages_per_second = 0;
  /// Nobody can dial this peer (it advertises kBehindNat, link.h): it reaches the peers that
  /// advertise kBehindNat too through a relay. ZeroMQ links only.
  bool behind_nat = false;
};

/// The owner's view of messages before an algorithm gets them (see the file comment).
class ReceiveHook {
 public:
  virtual ~ReceiveHook() = default;
  /// True when the hook used the message up; it may also throw to abort the receive.
  virtual bool intercept(Message& message) = 0;
  /// Called at least every idle interval while a receive waits; may throw to abort it.
  virtual void idle() = 0;
};

class Transport {
 public:
  using Clock = std::chrono::steady_clock;

  /// Opens a link of `links` (a TransportContext) on the endpoint; IoError when it cannot
  /// be bound. `links` must outlive the transport.
  Transport(LinkFactory& links, TransportOptions options);
  /// Stops the link (see stop()).
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  PeerId self() const { return options_.self; }
  /// The endpoint actually bound (the port filled in when the option said "*").
  const std::string& endpoint() const { return endpoint_; }

  /// Opens a route to peer at endpoint (the link connects in the background and queues
  /// until then) and accepts messages from that peer. InvalidArgument if already connected.
  /// With CURVE the neighbour's public key comes from options.curve->peer_keys
  /// (InvalidArgument when it is not there).
  void connect(PeerId peer, const std::string& endpoint);
  /// As above with the neighbour's public key (Z85) as the CURVE server key; it also
  /// becomes the only key messages from `peer` are accepted under. An empty key is the
  /// call above. InvalidArgument without CURVE or for a malformed key.
  void connect(PeerId peer, const std::string& endpoint, const std::string& server_public_key);
  /// Closes the route connect() opened to `peer` (what is still queued for it is dropped);
  /// messages from it are still accepted. Nothing when there is none.
  void disconnect(PeerId peer);
  /// Accepts messages from a peer this one does not send to (e.g. the ring's left side).
  void accept_from(PeerId peer);
  bool connected_to(PeerId peer) const { return routes_.count(peer) != 0; }
  /// Connected, or in the directory (the next send connects).
  bool reachable(PeerId peer) const { return connected_to(peer) || options_.directory.count(peer) != 0; }
  /// The periodic heartbeats go to these peers from now on (connecting those of the
  /// directory not connected yet; unreachable ones are skipped).
  void watch(const std::vector<PeerId>& peers);
  /// Adds a client public key (Z85) to the ZAP allow-list from now on. InvalidArgument
  /// without CURVE or for a malformed key.
  void admit(const std::string& public_key);
  bool secure() const { return options_.curve.has_value(); }
  /// This peer's CURVE public key (Z85), empty without CURVE.
  std::string public_key() const { return secure() ? options_.curve->keys.public_key : std::string(); }
  /// The key `peer`'s messages must arrive under (Z85); empty when none is known.
  std::string public_key_of(PeerId peer) const;

  /// Queues one message to a reachable peer (InvalidArgument otherwise); fills in the
  /// sender, payload length and CRC. The payload is copied, so the caller may reuse its
  /// buffer at once.
  void send(PeerId to, protocols::FrameHeader header, protocols::ByteSpan payload);
  /// As above, handing over an already built payload without a copy.
  void send(PeerId to, protocols::FrameHeader header, Payload payload);
  /// As above, keeping header.payload_crc: the caller already knows the payload's CRC-32C
  /// (a payload forwarded unchanged, or one checksummed while it was computed), so it is
  /// not read once more. A wrong CRC only makes the receiver drop the message.
  void send_checksummed(PeerId to, protocols::FrameHeader header, Payload payload);

  /// The oldest received message; TimeoutError at the deadline, IoError once stopped.
  Message receive(Clock::time_point deadline);
  Message receive(std::chrono::milliseconds timeout) { return receive(Clock::now() + timeout); }
  /// The oldest received message the hook leaves, or nullopt at once.
  std::optional<Message> try_receive();
  /// The oldest received message, or nullopt once the deadline passes; IoError once stopped.
  std::optional<Message> try_receive(Clock::time_point deadline);

  TransportStats stats() const { return stats_.snapshot(); }
  /// The peer through which this one reaches peers behind NAT, when it is behind NAT too
  /// and has such a route; nullopt otherwise. Cheap: no snapshot.
  std::optional<PeerId> relay() const {
    const PeerId p = stats_.relay();
    return p == StatsRecorder::kNoRelay ? std::nullopt : std::optional<PeerId>(p);
  }
  /// When each peer was last heard from, and what its last heartbeat said.
  std::map<PeerId, PeerLiveness> liveness() const { return stats_.liveness(); }
  /// What this peer's heartbeats say from now on: its view and round (membership.h).
  void announce(std::uint64_t view, std::uint64_t round);
  bool heartbeats() const { return options_.heartbeat_interval.count() > 0; }

  /// Routes every later receive through `hook` (nullptr: none), calling its idle() at
  /// least every `idle_every` while waiting. The hook must outlive its use here.
  void set_hook(ReceiveHook* hook, std::chrono::milliseconds idle_every = std::chrono::milliseconds(50));
  /// Runs the hook's idle() now (failure detection, view changes), for waits that are not a
  /// receive; throws what it throws.
  void idle();
  /// Returns messages the owner set aside to the front of the queue, in their order.
  void put_back(std::vector<Message> messages);

  /// Stops the link (over ZeroMQ: asks the I/O thread to stop and joins it; messages already
  /// handed to ZeroMQ are still delivered within linger_ms). Idempotent.
  void stop();

 private:
  void require_running() const;
  void connect_with(PeerId peer, const std::string& endpoint, const std::string* server_key);
  void connect_on_demand(PeerId peer);
  void send_encoded(PeerId to, std::vector<std::uint8_t>& head, Payload payload);
  std::optional<Message> next(Clock::time_point deadline);

  TransportOptions options_;
  Inbox inbox_;
  StatsRecorder stats_;
  std::unique_ptr<Link> link_;  // after inbox_ and stats_, which it writes into until stopped
  std::string endpoint_;
  std::set<PeerId> routes_;
  ReceiveHook* hook_ = nullptr;
  std::chrono::milliseconds idle_every_{50};
  Clock::time_point next_idle_{};
  bool stopped_ = false;
};

}  // namespace starling::gossip
