#pragma once
// Peer-to-peer transport over ZeroMQ. Each peer binds one ROUTER on its endpoint and
// reaches each neighbour through a DEALER whose routing id is its own peer id. One I/O
// thread owns all sockets; this class is the owner's handle to it (use it from one thread):
// commands travel over an inproc PAIR, validated incoming messages come back through a
// thread-safe Inbox. Every message is a header frame + payload frame (protocols/frame.h);
// invalid ones are dropped and counted per reason, never raised. Every wait has a deadline
// and ends in TimeoutError; socket failures raise IoError.
#include <chrono>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "gossip/inbox.h"
#include "gossip/message.h"
#include "gossip/transport_stats.h"
#include "protocols/frame.h"
#include "protocols/span.h"

namespace starling::gossip {

class IoLoop;

struct TransportOptions {
  PeerId self = 0;
  /// Where the ROUTER binds, e.g. "tcp://127.0.0.1:5555"; "tcp://127.0.0.1:*" picks a free port.
  std::string bind_endpoint = "tcp://127.0.0.1:*";
  /// Peers whose messages are accepted from the start (the membership allow-list). Peers
  /// added later by connect() or accept_from() are accepted only from then on, so a sender
  /// must be known before it starts sending or its first messages count as unknown_sender.
  std::vector<PeerId> accept;
  int send_hwm = 10000;     // messages queued per DEALER before the I/O thread holds them back
  int receive_hwm = 10000;  // messages queued per incoming connection
  int socket_buffer_bytes = 0;  // SO_SNDBUF/SO_RCVBUF of TCP connections; 0 = OS default
  int linger_ms = 2000;     // how long closing waits to deliver messages already queued
  std::size_t inbox_limit_bytes = std::size_t{1} << 30;  // stop reading the network beyond this
  std::chrono::milliseconds command_timeout{5000};       // connect/accept/stop acknowledgements
  protocols::FrameLimits limits;
};

class Transport {
 public:
  using Clock = std::chrono::steady_clock;

  /// Binds the ROUTER and starts the I/O thread; IoError when the endpoint cannot be bound.
  Transport(zmq::context_t& context, TransportOptions options);
  /// Stops the I/O thread (see stop()).
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  PeerId self() const { return options_.self; }
  /// The endpoint actually bound (the port filled in when the option said "*").
  const std::string& endpoint() const { return endpoint_; }

  /// Opens a DEALER to peer at endpoint (ZeroMQ connects in the background and queues
  /// until then) and accepts messages from that peer. InvalidArgument if already connected.
  void connect(PeerId peer, const std::string& endpoint);
  /// Accepts messages from a peer this one does not send to (e.g. the ring's left side).
  void accept_from(PeerId peer);
  bool connected_to(PeerId peer) const { return routes_.count(peer) != 0; }

  /// Queues one message to a connected peer; fills in the sender, payload length and CRC.
  /// The payload is copied, so the caller may reuse its buffer at once.
  void send(PeerId to, protocols::FrameHeader header, protocols::ByteSpan payload);
  /// As above, handing over an already built payload without a copy.
  void send(PeerId to, protocols::FrameHeader header, zmq::message_t payload);

  /// The oldest received message; TimeoutError at the deadline, IoError once stopped.
  Message receive(Clock::time_point deadline);
  Message receive(std::chrono::milliseconds timeout) { return receive(Clock::now() + timeout); }
  std::optional<Message> try_receive() { return inbox_.try_pop(); }

  TransportStats stats() const { return stats_.snapshot(); }

  /// Asks the I/O thread to stop and joins it; messages already handed to ZeroMQ are still
  /// delivered within linger_ms. Idempotent.
  void stop();

 private:
  void send_command(std::uint8_t code, PeerId peer, zmq::message_t* args, std::size_t count);
  void await_reply(const std::string& what);

  TransportOptions options_;
  Inbox inbox_;
  StatsRecorder stats_;
  std::unique_ptr<IoLoop> loop_;
  zmq::socket_t control_;
  std::string endpoint_;
  std::set<PeerId> routes_;
  std::thread thread_;
};

}  // namespace starling::gossip
