#pragma once
// The transport's I/O thread (private to the transport's .cpp files: gossip/transport/zmq/zmq_bridge.h).
// It alone owns the peer's sockets — one ROUTER bound on the peer's endpoint, one DEALER per
// neighbour, and its end of the inproc PAIR control channel — and polls them all: commands
// from the owner (connect, accept, send, stop) come over the PAIR and are acknowledged
// there; incoming frames are validated and pushed into the Inbox, or dropped and counted.
//
// Liveness lives here too, so that a peer busy computing still proves it is alive: every
// heartbeat_interval the thread sends a heartbeat (membership_messages.h; header round =
// the owner's view, payload last_round = its round, see announce()) to every connected
// peer the owner watches (watch(); every connected peer until it says) whose queue is not
// backed up, and consumes the heartbeats it receives, recording them with the time of every
// accepted message (StatsRecorder::liveness). Heartbeats that pass on deaths go on to the
// owner as well.
//
// Hostile input is cut off as early as it can be, by the checks of every link
// (gossip/transport/admission.h); beyond them ZeroMQ drops the connection of a frame beyond
// twice limits.max_payload before it is buffered whole.
//
// Routes: a DEALER dialed to a peer's endpoint; to a peer behind NAT (endpoint kBehindNat,
// link.h), which dialed this peer, the ROUTER's side of that connection (a reverse route);
// and, from a peer behind NAT to another, a relay: the first peer this one dialed that was
// heard from within the last three heartbeats, which passes the frame on (relay_envelope.h),
// counted against the requester's message rate. So frames arrive on the DEALERs too. A
// reverse route whose peer has not dialed in yet holds its frames until it has, but a hello
// goes through a relay, so that the peer behind NAT learns of this one and dials it.
//
// With CURVE the ROUTER is a CURVE server in its own ZAP domain (see zap_handler.h) and a
// socket monitor on it counts handshakes that fail before ZAP is asked (clients without
// CURVE, garbage); each DEALER is a CURVE client. A message whose sender id has a known
// public key must arrive under that key (the ZAP user id; over a DEALER, the key it dialed),
// or it is dropped. What goes through a relay travels in a box between the two ends
// (relay_box.h), which the receiver opens under the origin's key.
//
// Control channel, owner -> I/O thread (multipart):
//   [u8 command | u32 peer id LE]
//   [argument frames: connect: endpoint, optional server public key; send: header, payload]
// I/O thread -> owner, for connect/accept/stop only: [u8 0 = ok, 1 = failed | error text]
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "gossip/transport/admission.h"
#include "gossip/transport/curve.h"
#include "gossip/transport/inbox.h"
#include "gossip/transport/message.h"
#include "gossip/transport/transport_stats.h"
#include "gossip/transport/zmq/relay_box.h"
#include "protocols/frame.h"

namespace starling::gossip {

using Clock = std::chrono::steady_clock;

enum class IoCommand : std::uint8_t { connect = 1, accept = 2, send = 3, stop = 4, disconnect = 5 };

struct IoLoopOptions {
  PeerId self = 0;
  std::string bind_endpoint;
  std::string control_endpoint;  // inproc:// name, unique per transport
  int send_hwm = 0;
  int receive_hwm = 0;
  int linger_ms = 0;
  int socket_buffer_bytes = 0;
  std::size_t inbox_limit_bytes = 0;
  std::vector<PeerId> accept;
  protocols::FrameLimits limits;
  bool accept_unknown_hello = false;  // let hello from not-yet-accepted senders through
  std::optional<CurveSecurity> curve;
  std::string zap_domain;        // the ROUTER's domain in the context's ZAP handler
  std::string monitor_endpoint;  // inproc:// name for the ROUTER's handshake monitor
  std::chrono::milliseconds heartbeat_interval{0};  // 0: this thread sends none
  std::uint32_t max_messages_per_second = 0;        // per sender; 0: no cap
  bool behind_nat = false;  // peers behind NAT too are reached through a relay
};

class IoLoop {
 public:
  /// Creates and binds the ROUTER and the control PAIR on the calling thread; throws
  /// IoError when the endpoint cannot be bound. run() may then be called on another thread.
  IoLoop(zmq::context_t& context, IoLoopOptions options, Inbox& inbox, StatsRecorder& stats);

  const std::string& endpoint() const { return endpoint_; }
  /// Serves until a stop command; closes the inbox on the way out, also on failure.
  void run();
  /// What the next heartbeats say (any thread): the owner's view and round.
  void announce(std::uint64_t view, std::uint64_t round) {
    view_.store(view, std::memory_order_relaxed);
    round_.store(round, std::memory_order_relaxed);
  }
  /// The peers the next heartbeats go to (any thread), among those connected.
  void watch(std::vector<PeerId> peers);

 private:
  struct Outgoing {
    zmq::message_t header, payload;
    std::optional<PeerId> relayed_from;  // a frame this peer passes on as a relay
  };

  void serve();
  void handle_commands();
  void handle_command(std::vector<zmq::message_t>& frames);
  void reply(bool ok, const std::string& text);
  void secure_router();
  void secure_dealer(zmq::socket_t& dealer, const std::string& server_key);
  void handle_monitor_events();
  void do_connect(PeerId peer, const std::string& endpoint, const std::string& server_key);
  bool routed(PeerId peer) const;
  void do_send(PeerId peer, zmq::message_t header, zmq::message_t payload);
  void enqueue(PeerId peer, Outgoing out);
  bool try_send(PeerId peer, Outgoing& out);
  bool send_direct(PeerId peer, std::initializer_list<zmq::message_t*> parts);
  bool send_through_relay(PeerId peer, Outgoing& out);
  void choose_relay(Clock::time_point now);
  void flush(PeerId peer);
  void flush_indirect();
  void handle_incoming();
  void handle_dealer(PeerId peer, zmq::socket_t& dealer);
  PeerId sender_over_dealer(PeerId route, const zmq::message_t& head) const;
  bool hello(const zmq::message_t& head) const;
  // `dialed`: it came over the DEALER to `peer`, whose CURVE server key vouches for it.
  void accept_frames(PeerId peer, zmq::message_t& head, zmq::message_t& payload, bool dialed = false);
  void accept_boxed(PeerId origin, const zmq::message_t& box);
  void accept_enveloped(PeerId via, const zmq::message_t& envelope, zmq::message_t& head, zmq::message_t& payload);
  void relay(PeerId from, PeerId to, zmq::message_t& head, zmq::message_t& payload);
  bool admissible(PeerId peer, const zmq::message_t& payload) const;
  void send_heartbeats(Clock::time_point now);
  std::optional<std::set<PeerId>> watched_peers() const;
  std::chrono::milliseconds poll_timeout(bool reading) const;
  bool read_multipart(zmq::socket_t& socket, std::vector<zmq::message_t>& frames);

  IoLoopOptions options_;
  Inbox& inbox_;
  StatsRecorder& stats_;
  zmq::context_t& context_;
  zmq::socket_t router_;
  zmq::socket_t control_;
  zmq::socket_t monitor_;  // unused (closed) without CURVE
  std::string endpoint_;
  std::map<PeerId, zmq::socket_t> dealers_;
  std::set<PeerId> reverse_, relayed_;  // peers behind NAT: over their connection, or a relay
  std::optional<PeerId> relay_;          // the dialed peer that relays; none: the first dialed
  // Held back while a DEALER is at its HWM, or a reverse route's peer has not dialed in.
  std::map<PeerId, std::deque<Outgoing>> outboxes_;
  Admission admission_;
  std::map<PeerId, std::string> peer_keys_;  // CURVE: the key each sender id must use
  std::optional<RelayBox> box_;              // CURVE: relayed frames' boxes
  Clock::time_point next_heartbeat_{};
  std::atomic<std::uint64_t> view_{0}, round_{0};
  mutable std::mutex watch_mutex_;
  std::optional<std::set<PeerId>> watched_;  // none: every connected peer
  bool stopping_ = false;
};

}  // namespace starling::gossip
