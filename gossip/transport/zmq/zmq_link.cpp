// The link over ZeroMQ: the owner's end of the control channel to the I/O thread that owns
// the sockets (gossip/transport/zmq/zmq_link.h).
#include "gossip/transport/zmq/zmq_link.h"

#include <atomic>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "gossip/transport/error.h"
#include "gossip/transport/transport.h"
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
  l.behind_nat = o.behind_nat;
  if (zap) {
    l.zap_domain = zap->domain();
    l.monitor_endpoint = unique_name("inproc://starling-monitor-");
  }
  return l;
}

Payload text_payload(const std::string& text) {
  return Payload(protocols::ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

class ZmqLink final : public Link {
 public:
  ZmqLink(zmq::context_t& context, const TransportOptions& options, Inbox& inbox, StatsRecorder& stats);
  ~ZmqLink() override;

  const std::string& endpoint() const override { return endpoint_; }
  void connect(PeerId peer, const std::string& endpoint, const std::string* server_key) override;
  void accept(PeerId peer) override;
  void disconnect(PeerId peer) override;
  void send(PeerId to, Payload head, Payload payload) override;
  void watch(std::vector<PeerId> peers) override { loop_->watch(std::move(peers)); }
  void announce(std::uint64_t view, std::uint64_t round) override { loop_->announce(view, round); }
  void admit(const std::string& public_key) override;
  void stop() override;

 private:
  void send_command(IoCommand code, PeerId peer, Payload* args, std::size_t count);
  void await_reply(const std::string& what);

  Inbox& inbox_;
  std::chrono::milliseconds command_timeout_;
  // Declared before loop_: the ROUTER closes before its ZAP domain goes (a CURVE server
  // without a handler would admit anyone).
  std::unique_ptr<ZapRegistration> zap_;
  std::unique_ptr<IoLoop> loop_;
  zmq::socket_t control_;  // the owner's end of the PAIR to the I/O thread
  std::string endpoint_;
  std::thread thread_;
};

ZmqLink::ZmqLink(zmq::context_t& context, const TransportOptions& options, Inbox& inbox, StatsRecorder& stats)
    : inbox_(inbox), command_timeout_(options.command_timeout), control_(context, zmq::socket_type::pair) {
  keep_message_buffers_in_heap();
  if (options.curve) {
    validate(*options.curve);
    zap_ = std::make_unique<ZapRegistration>(context, *options.curve, stats);
  }
  const std::string control = unique_name("inproc://starling-transport-");
  loop_ = std::make_unique<IoLoop>(context, loop_options(options, control, zap_.get()), inbox, stats);
  endpoint_ = loop_->endpoint();
  control_.set(zmq::sockopt::linger, 0);
  control_.set(zmq::sockopt::sndhwm, 0);
  control_.set(zmq::sockopt::rcvhwm, 0);
  control_.connect(control);
  // Starting the thread is the full memory barrier ZeroMQ asks for when sockets change threads.
  thread_ = std::thread([loop = loop_.get()] { loop->run(); });
}

ZmqLink::~ZmqLink() {
  try {
    stop();
  } catch (const std::exception&) {
    // A destructor must not throw; stop() has joined the thread before any error surfaces.
  }
}

void ZmqLink::send_command(IoCommand code, PeerId peer, Payload* args, std::size_t count) {
  if (!thread_.joinable() || inbox_.closed()) STARLING_GOSSIP_THROW(IoError, "transport is stopped");
  std::uint8_t head[5];
  head[0] = static_cast<std::uint8_t>(code);
  protocols::store_le<std::uint32_t>(head + 1, peer);
  const auto more = count ? zmq::send_flags::sndmore : zmq::send_flags::none;
  // The control socket has no HWM, so these sends never block.
  control_.send(zmq::const_buffer(head, sizeof head), more);
  for (std::size_t i = 0; i < count; ++i)
    control_.send(message_of(std::move(args[i])), i + 1 < count ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

void ZmqLink::await_reply(const std::string& what) {
  std::vector<zmq::pollitem_t> items{{control_.handle(), 0, ZMQ_POLLIN, 0}};
  zmq::poll(items, command_timeout_);
  zmq::message_t reply;
  if (!(items[0].revents & ZMQ_POLLIN) || !control_.recv(reply, zmq::recv_flags::dontwait))
    STARLING_GOSSIP_THROW(TimeoutError, what + ": no answer from the I/O thread");
  const auto* p = static_cast<const char*>(reply.data());
  if (reply.size() == 0 || p[0] != 0)
    STARLING_GOSSIP_THROW(IoError, what + ": " + std::string(p + (reply.size() ? 1 : 0), p + reply.size()));
}

void ZmqLink::connect(PeerId peer, const std::string& endpoint, const std::string* server_key) {
  Payload args[2] = {text_payload(endpoint), Payload()};
  if (server_key) args[1] = text_payload(*server_key);
  send_command(IoCommand::connect, peer, args, server_key ? 2 : 1);
  await_reply("connect " + endpoint);
}

void ZmqLink::accept(PeerId peer) {
  send_command(IoCommand::accept, peer, nullptr, 0);
  await_reply("accept " + std::to_string(peer));
}

void ZmqLink::disconnect(PeerId peer) {
  send_command(IoCommand::disconnect, peer, nullptr, 0);
  await_reply("disconnect " + std::to_string(peer));
}

void ZmqLink::send(PeerId to, Payload head, Payload payload) {
  Payload args[2] = {std::move(head), std::move(payload)};
  send_command(IoCommand::send, to, args, 2);
}

void ZmqLink::admit(const std::string& public_key) {
  if (!zap_) STARLING_GOSSIP_THROW(InvalidArgument, "admit: this transport has no CURVE security");
  zap_->admit(public_key);
}

void ZmqLink::stop() {
  if (!thread_.joinable()) return;
  bool answered = true;
  if (!inbox_.closed()) {
    try {
      send_command(IoCommand::stop, 0, nullptr, 0);
      await_reply("stop");
    } catch (const GossipError&) {
      answered = false;
    }
  }
  thread_.join();
  if (!answered) STARLING_GOSSIP_THROW(TimeoutError, "stop: the I/O thread did not acknowledge");
}

// The shared ZeroMQ context.
class ZmqLinks final : public LinkFactory {
 public:
  explicit ZmqLinks(int io_threads) : context_(io_threads) {}
  std::unique_ptr<Link> open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats) override {
    return std::make_unique<ZmqLink>(context_, options, inbox, stats);
  }

 private:
  zmq::context_t context_;
};

}  // namespace

std::unique_ptr<LinkFactory> zmq_links(int io_threads) { return std::make_unique<ZmqLinks>(io_threads); }

}  // namespace starling::gossip
