// Owner side of the ZeroMQ transport (gossip/transport/transport.h).
#include "gossip/transport/transport.h"

#include <atomic>
#include <vector>

#include "gossip/transport/error.h"
#include "gossip/transport/zmq/buffer_heap.h"
#include "gossip/transport/zmq/io_loop.h"
#include "gossip/transport/zmq/zap_handler.h"
#include "gossip/transport/zmq/zmq_bridge.h"
#include "protocols/byte_io.h"

namespace starling::gossip {

namespace {

// inproc names are per context; a process-wide counter keeps them unique.
std::string unique_name(const char* prefix) {
  static std::atomic<std::uint64_t> next{0};
  return prefix + std::to_string(next.fetch_add(1));
}

IoLoopOptions loop_options(const TransportOptions& o, std::string control, const ZapRegistration* zap) {
  IoLoopOptions l;
  l.self = o.self;
  l.bind_endpoint = o.bind_endpoint;
  l.control_endpoint = std::move(control);
  l.send_hwm = o.send_hwm;
  l.receive_hwm = o.receive_hwm;
  l.linger_ms = o.linger_ms;
  l.socket_buffer_bytes = o.socket_buffer_bytes;
  l.inbox_limit_bytes = o.inbox_limit_bytes;
  l.limits = o.limits;
  l.accept = o.accept;
  l.accept_unknown_hello = o.accept_unknown_hello;
  l.curve = o.curve;
  l.heartbeat_interval = o.heartbeat_interval;
  l.max_messages_per_second = o.max_messages_per_second;
  if (zap) {
    l.zap_domain = zap->domain();
    l.monitor_endpoint = unique_name("inproc://starling-monitor-");
  }
  return l;
}

Payload text_payload(const std::string& text) {
  return Payload(protocols::ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

}  // namespace

struct Transport::Control {
  explicit Control(zmq::context_t& context) : socket(context, zmq::socket_type::pair) {}
  zmq::socket_t socket;
};

Transport::Transport(TransportContext& shared, TransportOptions options)
    : options_(std::move(options)) {
  zmq::context_t& context = ZmqBridge::context(shared);
  control_ = std::make_unique<Control>(context);
  keep_message_buffers_in_heap();
  if (options_.curve) {
    validate(*options_.curve);
    zap_ = std::make_unique<ZapRegistration>(context, *options_.curve, stats_);
  }
  const std::string control = unique_name("inproc://starling-transport-");
  loop_ = std::make_unique<IoLoop>(context, loop_options(options_, control, zap_.get()), inbox_, stats_);
  endpoint_ = loop_->endpoint();
  zmq::socket_t& socket = control_->socket;
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::sndhwm, 0);
  socket.set(zmq::sockopt::rcvhwm, 0);
  socket.connect(control);
  // Starting the thread is the full memory barrier ZeroMQ asks for when sockets change threads.
  thread_ = std::thread([loop = loop_.get()] { loop->run(); });
}

Transport::~Transport() {
  try {
    stop();
  } catch (const std::exception&) {
    // A destructor must not throw; stop() has joined the thread before any error surfaces.
  }
}

void Transport::send_command(std::uint8_t code, PeerId peer, Payload* args, std::size_t count) {
  if (!thread_.joinable() || inbox_.closed()) STARLING_GOSSIP_THROW(IoError, "transport is stopped");
  std::uint8_t head[5];
  head[0] = code;
  protocols::store_le<std::uint32_t>(head + 1, peer);
  const auto more = count ? zmq::send_flags::sndmore : zmq::send_flags::none;
  // The control socket has no HWM, so these sends never block.
  zmq::socket_t& socket = control_->socket;
  socket.send(zmq::const_buffer(head, sizeof head), more);
  for (std::size_t i = 0; i < count; ++i)
    socket.send(ZmqBridge::message(args[i]), i + 1 < count ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

void Transport::await_reply(const std::string& what) {
  zmq::socket_t& socket = control_->socket;
  std::vector<zmq::pollitem_t> items{{socket.handle(), 0, ZMQ_POLLIN, 0}};
  zmq::poll(items, options_.command_timeout);
  zmq::message_t reply;
  if (!(items[0].revents & ZMQ_POLLIN) || !socket.recv(reply, zmq::recv_flags::dontwait))
    STARLING_GOSSIP_THROW(TimeoutError, what + ": no answer from the I/O thread");
  const auto* p = static_cast<const char*>(reply.data());
  if (reply.size() == 0 || p[0] != 0)
    STARLING_GOSSIP_THROW(IoError, what + ": " + std::string(p + (reply.size() ? 1 : 0), p + reply.size()));
}

void Transport::connect(PeerId peer, const std::string& endpoint) {
  if (!options_.curve) return connect_with(peer, endpoint, nullptr);
  const auto it = options_.curve->peer_keys.find(peer);
  if (it == options_.curve->peer_keys.end())
    STARLING_GOSSIP_THROW(InvalidArgument, "CURVE: no public key for peer " + std::to_string(peer));
  connect_with(peer, endpoint, &it->second);
}

void Transport::connect(PeerId peer, const std::string& endpoint, const std::string& server_public_key) {
  if (!options_.curve) STARLING_GOSSIP_THROW(InvalidArgument, "a server key needs CURVE security in the options");
  if (!is_z85_key(server_public_key))
    STARLING_GOSSIP_THROW(InvalidArgument, "public key of peer " + std::to_string(peer) + " is not a Z85 CURVE key");
  connect_with(peer, endpoint, &server_public_key);
}

void Transport::connect_with(PeerId peer, const std::string& endpoint, const std::string* server_key) {
  if (routes_.count(peer)) STARLING_GOSSIP_THROW(InvalidArgument, "already connected to peer " + std::to_string(peer));
  Payload args[2] = {text_payload(endpoint), Payload()};
  if (server_key) args[1] = text_payload(*server_key);
  send_command(static_cast<std::uint8_t>(IoCommand::connect), peer, args, server_key ? 2 : 1);
  await_reply("connect " + endpoint);
  routes_.insert(peer);
}

void Transport::admit(const std::string& public_key) {
  if (!zap_) STARLING_GOSSIP_THROW(InvalidArgument, "admit: this transport has no CURVE security");
  if (!is_z85_key(public_key)) STARLING_GOSSIP_THROW(InvalidArgument, "admit: not a Z85 CURVE key");
  zap_->admit(public_key);
}

void Transport::accept_from(PeerId peer) {
  send_command(static_cast<std::uint8_t>(IoCommand::accept), peer, nullptr, 0);
  await_reply("accept " + std::to_string(peer));
}

void Transport::send(PeerId to, protocols::FrameHeader header, protocols::ByteSpan payload) {
  send(to, header, Payload(payload));
}

void Transport::send(PeerId to, protocols::FrameHeader header, Payload payload) {
  header.sender = options_.self;
  std::vector<std::uint8_t> head;
  protocols::encode_header_for(header, payload.bytes(), head);
  send_encoded(to, head, std::move(payload));
}

void Transport::send_checksummed(PeerId to, protocols::FrameHeader header, Payload payload) {
  header.sender = options_.self;
  header.payload_length = static_cast<std::uint32_t>(payload.size());
  std::vector<std::uint8_t> head;
  protocols::encode_header(header, head);
  send_encoded(to, head, std::move(payload));
}

void Transport::connect_on_demand(PeerId peer) {
  if (routes_.count(peer)) return;
  const auto it = options_.directory.find(peer);
  if (it == options_.directory.end()) STARLING_GOSSIP_THROW(InvalidArgument, "no route to peer " + std::to_string(peer));
  connect(peer, it->second);
}

void Transport::watch(const std::vector<PeerId>& peers) {
  std::vector<PeerId> beat;
  for (PeerId p : peers)
    if (reachable(p)) connect_on_demand(p), beat.push_back(p);
  loop_->watch(std::move(beat));
}

void Transport::send_encoded(PeerId to, std::vector<std::uint8_t>& head, Payload payload) {
  connect_on_demand(to);
  if (payload.size() > UINT32_MAX) STARLING_GOSSIP_THROW(InvalidArgument, "payload over 4 GiB");
  Payload args[2] = {Payload(protocols::ByteSpan(head.data(), head.size())), std::move(payload)};
  send_command(static_cast<std::uint8_t>(IoCommand::send), to, args, 2);
}

void Transport::announce(std::uint64_t view, std::uint64_t round) { loop_->announce(view, round); }

void Transport::set_hook(ReceiveHook* hook, std::chrono::milliseconds idle_every) {
  hook_ = hook;
  idle_every_ = idle_every;
  next_idle_ = Clock::time_point{};
}

void Transport::idle() {
  if (hook_) hook_->idle();
}

void Transport::put_back(std::vector<Message> messages) { inbox_.push_front(std::move(messages)); }

// The next message the hook leaves alone, or nullopt at the deadline or once stopped; the
// hook's idle() runs whenever it is due, also when messages keep coming.
std::optional<Message> Transport::next(Clock::time_point deadline) {
  for (;;) {
    if (hook_ && Clock::now() >= next_idle_) {
      next_idle_ = Clock::now() + idle_every_;
      hook_->idle();
    }
    std::optional<Message> m = inbox_.pop(hook_ ? std::min(deadline, next_idle_) : deadline);
    if (m && hook_ && hook_->intercept(*m)) continue;
    if (m) return m;
    if (inbox_.closed() || Clock::now() >= deadline) return std::nullopt;
  }
}

Message Transport::receive(Clock::time_point deadline) {
  std::optional<Message> m = next(deadline);
  if (m) return std::move(*m);
  if (inbox_.closed()) STARLING_GOSSIP_THROW(IoError, "transport is stopped");
  STARLING_GOSSIP_THROW(TimeoutError, "receive: deadline passed on peer " + std::to_string(options_.self));
}

std::optional<Message> Transport::try_receive() { return next(Clock::time_point{}); }

std::optional<Message> Transport::try_receive(Clock::time_point deadline) {
  std::optional<Message> m = next(deadline);
  if (!m && inbox_.closed()) STARLING_GOSSIP_THROW(IoError, "transport is stopped");
  return m;
}

void Transport::stop() {
  if (!thread_.joinable()) return;
  bool answered = true;
  if (!inbox_.closed()) {
    try {
      send_command(static_cast<std::uint8_t>(IoCommand::stop), 0, nullptr, 0);
      await_reply("stop");
    } catch (const GossipError&) {
      answered = false;
    }
  }
  thread_.join();
  if (!answered) STARLING_GOSSIP_THROW(TimeoutError, "stop: the I/O thread did not acknowledge");
}

}  // namespace starling::gossip
