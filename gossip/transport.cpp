// Owner side of the ZeroMQ transport (gossip/transport.h).
#include "gossip/transport.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "gossip/error.h"
#include "gossip/io_loop.h"
#include "protocols/byte_io.h"

namespace starling::gossip {

namespace {

// inproc names are per context; a process-wide counter keeps them unique.
std::string control_name() {
  static std::atomic<std::uint64_t> next{0};
  return "inproc://starling-transport-" + std::to_string(next.fetch_add(1));
}

IoLoopOptions loop_options(const TransportOptions& o, std::string control) {
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
  return l;
}

}  // namespace

Transport::Transport(zmq::context_t& context, TransportOptions options)
    : options_(std::move(options)), control_(context, zmq::socket_type::pair) {
  const std::string control = control_name();
  loop_ = std::make_unique<IoLoop>(context, loop_options(options_, control), inbox_, stats_);
  endpoint_ = loop_->endpoint();
  control_.set(zmq::sockopt::linger, 0);
  control_.set(zmq::sockopt::sndhwm, 0);
  control_.set(zmq::sockopt::rcvhwm, 0);
  control_.connect(control);
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

void Transport::send_command(std::uint8_t code, PeerId peer, zmq::message_t* args, std::size_t count) {
  if (!thread_.joinable() || inbox_.closed()) STARLING_GOSSIP_THROW(IoError, "transport is stopped");
  std::uint8_t head[5];
  head[0] = code;
  protocols::store_le<std::uint32_t>(head + 1, peer);
  const auto more = count ? zmq::send_flags::sndmore : zmq::send_flags::none;
  // The control socket has no HWM, so these sends never block.
  control_.send(zmq::const_buffer(head, sizeof head), more);
  for (std::size_t i = 0; i < count; ++i)
    control_.send(args[i], i + 1 < count ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

void Transport::await_reply(const std::string& what) {
  std::vector<zmq::pollitem_t> items{{control_.handle(), 0, ZMQ_POLLIN, 0}};
  zmq::poll(items, options_.command_timeout);
  zmq::message_t reply;
  if (!(items[0].revents & ZMQ_POLLIN) || !control_.recv(reply, zmq::recv_flags::dontwait))
    STARLING_GOSSIP_THROW(TimeoutError, what + ": no answer from the I/O thread");
  const auto* p = static_cast<const char*>(reply.data());
  if (reply.size() == 0 || p[0] != 0)
    STARLING_GOSSIP_THROW(IoError, what + ": " + std::string(p + (reply.size() ? 1 : 0), p + reply.size()));
}

void Transport::connect(PeerId peer, const std::string& endpoint) {
  if (routes_.count(peer)) STARLING_GOSSIP_THROW(InvalidArgument, "already connected to peer " + std::to_string(peer));
  zmq::message_t arg(endpoint.data(), endpoint.size());
  send_command(static_cast<std::uint8_t>(IoCommand::connect), peer, &arg, 1);
  await_reply("connect " + endpoint);
  routes_.insert(peer);
}

void Transport::accept_from(PeerId peer) {
  send_command(static_cast<std::uint8_t>(IoCommand::accept), peer, nullptr, 0);
  await_reply("accept " + std::to_string(peer));
}

void Transport::send(PeerId to, protocols::FrameHeader header, protocols::ByteSpan payload) {
  zmq::message_t body(payload.size());
  if (payload.size()) std::memcpy(body.data(), payload.data(), payload.size());
  send(to, header, std::move(body));
}

void Transport::send(PeerId to, protocols::FrameHeader header, zmq::message_t payload) {
  if (!routes_.count(to)) STARLING_GOSSIP_THROW(InvalidArgument, "no route to peer " + std::to_string(to));
  if (payload.size() > UINT32_MAX) STARLING_GOSSIP_THROW(InvalidArgument, "payload over 4 GiB");
  header.sender = options_.self;
  std::vector<std::uint8_t> head;
  protocols::encode_header_for(
      header, {static_cast<const std::uint8_t*>(payload.data()), payload.size()}, head);
  zmq::message_t args[2] = {zmq::message_t(head.data(), head.size()), std::move(payload)};
  send_command(static_cast<std::uint8_t>(IoCommand::send), to, args, 2);
}

Message Transport::receive(Clock::time_point deadline) {
  std::optional<Message> m = inbox_.pop(deadline);
  if (m) return std::move(*m);
  if (inbox_.closed()) STARLING_GOSSIP_THROW(IoError, "transport is stopped");
  STARLING_GOSSIP_THROW(TimeoutError, "receive: deadline passed on peer " + std::to_string(options_.self));
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
