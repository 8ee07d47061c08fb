// The transport's I/O thread: socket ownership, polling, validation (gossip/transport/zmq/io_loop.h).
#include "gossip/transport/zmq/io_loop.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <zmq.h>

#include "gossip/transport/error.h"
#include "gossip/transport/heartbeat_frame.h"
#include "gossip/transport/zmq/peer_identity.h"
#include "gossip/transport/zmq/zmq_bridge.h"
#include "protocols/byte_io.h"

namespace starling::gossip {

namespace {

// Messages drained per readiness event, so one busy socket cannot starve the others.
constexpr int kBatch = 64;
constexpr std::size_t kMaxFrames = 4;

protocols::ByteSpan span_of(const zmq::message_t& m) {
  return {static_cast<const std::uint8_t*>(m.data()), m.size()};
}

void set_common_options(zmq::socket_t& s, const IoLoopOptions& o) {
  s.set(zmq::sockopt::linger, o.linger_ms);
  s.set(zmq::sockopt::sndhwm, o.send_hwm);
  s.set(zmq::sockopt::rcvhwm, o.receive_hwm);
  if (o.socket_buffer_bytes > 0) {
    s.set(zmq::sockopt::sndbuf, o.socket_buffer_bytes);
    s.set(zmq::sockopt::rcvbuf, o.socket_buffer_bytes);
  }
}

}  // namespace

IoLoop::IoLoop(zmq::context_t& context, IoLoopOptions options, Inbox& inbox, StatsRecorder& stats)
    : options_(std::move(options)),
      inbox_(inbox),
      stats_(stats),
      context_(context),
      router_(context, zmq::socket_type::router),
      control_(context, zmq::socket_type::pair),
      admission_(options_.accept, options_.limits, options_.accept_unknown_hello, options_.max_messages_per_second,
                 stats) {
  set_common_options(router_, options_);
  // Beyond twice the counted limit ZeroMQ cuts the connection before buffering the frame.
  router_.set(zmq::sockopt::maxmsgsize,
              static_cast<std::int64_t>(2 * static_cast<std::uint64_t>(options_.limits.max_payload) + 4096));
  // A peer that reconnects (a route reopened, a peer restarted under its id) comes back with
  // the same routing id before the old connection is torn down; by default ROUTER would turn
  // the new one away and drop its frames.
  router_.set(zmq::sockopt::router_handover, true);
  // The control channel must never block either side; its depth is bounded by the owner.
  control_.set(zmq::sockopt::linger, 0);
  control_.set(zmq::sockopt::sndhwm, 0);
  control_.set(zmq::sockopt::rcvhwm, 0);
  try {
    if (options_.curve) secure_router();
    router_.bind(options_.bind_endpoint);
    control_.bind(options_.control_endpoint);
  } catch (const zmq::error_t& e) {
    STARLING_GOSSIP_THROW(IoError, "cannot bind " + options_.bind_endpoint + ": " + e.what());
  }
  endpoint_ = router_.get(zmq::sockopt::last_endpoint);
}

void IoLoop::secure_router() {
  const CurveSecurity& curve = *options_.curve;
  peer_keys_ = curve.peer_keys;
  router_.set(zmq::sockopt::curve_server, true);
  router_.set(zmq::sockopt::curve_secretkey, curve.keys.secret_key);
  router_.set(zmq::sockopt::zap_domain, options_.zap_domain);
  // Clients that fail before ZAP is asked (no CURVE, bad handshake) show only here.
  const int events = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
  if (zmq_socket_monitor(router_.handle(), options_.monitor_endpoint.c_str(), events) != 0) throw zmq::error_t();
  monitor_ = zmq::socket_t(context_, zmq::socket_type::pair);
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(options_.monitor_endpoint);
}

void IoLoop::secure_dealer(zmq::socket_t& dealer, const std::string& server_key) {
  const CurveSecurity& curve = *options_.curve;
  dealer.set(zmq::sockopt::curve_serverkey, server_key);
  dealer.set(zmq::sockopt::curve_publickey, curve.keys.public_key);
  dealer.set(zmq::sockopt::curve_secretkey, curve.keys.secret_key);
}

void IoLoop::run() {
  try {
    serve();
  } catch (const std::exception&) {
    // The owner learns of it through the closed inbox (IoError on its next receive).
    stats_.dropped("io_thread_failed");
  }
  inbox_.close();
}

void IoLoop::serve() {
  std::vector<zmq::pollitem_t> items;
  std::vector<PeerId> blocked;
  while (!stopping_) {
    // Stop reading the network while the owner is behind; ZeroMQ's HWM and TCP then push back.
    const bool reading = inbox_.queued_bytes() < options_.inbox_limit_bytes;
    items.clear();
    blocked.clear();
    items.push_back({control_.handle(), 0, ZMQ_POLLIN, 0});
    items.push_back({router_.handle(), 0, static_cast<short>(reading ? ZMQ_POLLIN : 0), 0});
    if (monitor_.handle() != nullptr) items.push_back({monitor_.handle(), 0, ZMQ_POLLIN, 0});
    const std::size_t first_blocked = items.size();
    for (auto& [peer, queue] : outboxes_)
      if (!queue.empty()) {
        items.push_back({dealers_.at(peer).handle(), 0, ZMQ_POLLOUT, 0});
        blocked.push_back(peer);
      }
    zmq::poll(items, poll_timeout(reading));
    if (options_.heartbeat_interval.count() > 0 && Clock::now() >= next_heartbeat_) send_heartbeats(Clock::now());
    if (items[1].revents & ZMQ_POLLIN) handle_incoming();
    if (monitor_.handle() != nullptr && (items[2].revents & ZMQ_POLLIN)) handle_monitor_events();
    for (std::size_t i = 0; i < blocked.size(); ++i)
      if (items[first_blocked + i].revents & ZMQ_POLLOUT) flush(blocked[i]);
    if (items[0].revents & ZMQ_POLLIN) handle_commands();
  }
}

std::chrono::milliseconds IoLoop::poll_timeout(bool reading) const {
  std::chrono::milliseconds wait(reading ? 100 : 1);
  if (options_.heartbeat_interval.count() > 0) {
    const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_heartbeat_ - Clock::now());
    wait = std::max(std::chrono::milliseconds(0), std::min(wait, until));
  }
  return wait;
}

// One heartbeat to every connected peer, skipping those whose queue is backed up (a peer
// that does not read needs no more of them, and they must never pile up in memory).
void IoLoop::send_heartbeats(Clock::time_point now) {
  std::vector<std::uint8_t> payload, head;
  encode_periodic_heartbeat(options_.self, view_.load(std::memory_order_relaxed), round_.load(std::memory_order_relaxed),
                            now, head, payload);
  const std::optional<std::set<PeerId>> watched = watched_peers();
  for (auto& [peer, dealer] : dealers_) {
    if (watched && !watched->count(peer)) continue;
    const auto queue = outboxes_.find(peer);
    if (queue != outboxes_.end() && !queue->second.empty()) continue;
    zmq::message_t first(head.data(), head.size()), second(payload.data(), payload.size());
    if (!dealer.send(first, zmq::send_flags::sndmore | zmq::send_flags::dontwait)) continue;
    dealer.send(second, zmq::send_flags::dontwait);
    stats_.sent(peer, head.size() + payload.size(), true);
  }
  next_heartbeat_ = now + options_.heartbeat_interval;
}

void IoLoop::watch(std::vector<PeerId> peers) {
  std::lock_guard<std::mutex> lock(watch_mutex_);
  watched_ = std::set<PeerId>(peers.begin(), peers.end());
}

std::optional<std::set<PeerId>> IoLoop::watched_peers() const {
  std::lock_guard<std::mutex> lock(watch_mutex_);
  return watched_;
}

bool IoLoop::read_multipart(zmq::socket_t& socket, std::vector<zmq::message_t>& frames) {
  frames.clear();
  zmq::message_t part;
  if (!socket.recv(part, zmq::recv_flags::dontwait)) return false;
  bool more = part.more();
  frames.push_back(std::move(part));
  // The rest of a multipart message is already queued: ZeroMQ delivers it atomically.
  while (more) {
    zmq::message_t next;
    if (!socket.recv(next, zmq::recv_flags::none)) break;
    more = next.more();
    if (frames.size() <= kMaxFrames) frames.push_back(std::move(next));
  }
  return true;
}

void IoLoop::handle_monitor_events() {
  std::vector<zmq::message_t> frames;
  for (int i = 0; i < kBatch && read_multipart(monitor_, frames); ++i) {
    // Monitor event, first frame: u16 event id, u32 value (ZeroMQ 4.3, version 1 events).
    if (frames.empty() || frames[0].size() != 6) continue;
    const auto event = protocols::load_le<std::uint16_t>(static_cast<const std::uint8_t*>(frames[0].data()));
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) stats_.dropped("handshake_failed_protocol");
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) stats_.dropped("handshake_failed");
  }
}

void IoLoop::handle_commands() {
  std::vector<zmq::message_t> frames;
  for (int i = 0; i < kBatch && !stopping_ && read_multipart(control_, frames); ++i)
    handle_command(frames);
}

void IoLoop::handle_command(std::vector<zmq::message_t>& frames) {
  if (frames.empty() || frames[0].size() != 5) return;  // only the owner writes here
  const auto* head = static_cast<const std::uint8_t*>(frames[0].data());
  const PeerId peer = protocols::load_le<std::uint32_t>(head + 1);
  switch (static_cast<IoCommand>(head[0])) {
    case IoCommand::connect:
      if (frames.size() == 2 || frames.size() == 3)
        do_connect(peer, frames[1].to_string(), frames.size() == 3 ? frames[2].to_string() : std::string());
      break;
    case IoCommand::accept:
      admission_.accept(peer);
      reply(true, "");
      break;
    case IoCommand::disconnect:
      dealers_.erase(peer);  // closing it drops what it still holds (immediate: nothing of the owner's)
      outboxes_.erase(peer);
      reply(true, "");
      break;
    case IoCommand::send:
      if (frames.size() == 3) do_send(peer, std::move(frames[1]), std::move(frames[2]));
      break;
    case IoCommand::stop:
      stopping_ = true;
      for (auto& [id, queue] : outboxes_) flush(id);
      reply(true, "");
      break;
  }
}

void IoLoop::reply(bool ok, const std::string& text) {
  std::string body(1, ok ? '\0' : '\1');
  body += text;
  control_.send(zmq::buffer(body), zmq::send_flags::dontwait);
}

void IoLoop::do_connect(PeerId peer, const std::string& endpoint, const std::string& server_key) {
  if (dealers_.count(peer)) return reply(false, "peer " + std::to_string(peer) + " already connected");
  zmq::socket_t dealer(context_, zmq::socket_type::dealer);
  try {
    set_common_options(dealer, options_);
    dealer.set(zmq::sockopt::routing_id, routing_id_of(options_.self));
    // Queue only on a live connection: what cannot go out waits in this thread's outbox, and
    // closing never lingers on a peer that is gone.
    dealer.set(zmq::sockopt::immediate, true);
    if (options_.curve) secure_dealer(dealer, server_key);
    dealer.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return reply(false, "cannot connect to " + endpoint + ": " + e.what());
  }
  dealers_.emplace(peer, std::move(dealer));
  admission_.accept(peer);
  if (options_.curve) peer_keys_[peer] = server_key;  // one key pair serves both directions
  reply(true, "");
}

void IoLoop::do_send(PeerId peer, zmq::message_t header, zmq::message_t payload) {
  if (!dealers_.count(peer)) return stats_.dropped("unknown_destination");
  auto& queue = outboxes_[peer];
  Outgoing out{std::move(header), std::move(payload)};
  if (queue.empty() && try_send(peer, out)) return;
  queue.push_back(std::move(out));
}

bool IoLoop::try_send(PeerId peer, Outgoing& out) {
  zmq::socket_t& dealer = dealers_.at(peer);
  const std::uint64_t bytes = out.first.size() + out.second.size();
  if (!dealer.send(out.first, zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
  // Once the first part is queued ZeroMQ accepts the rest of the message.
  dealer.send(out.second, zmq::send_flags::dontwait);
  stats_.sent(peer, bytes, protocols::is_control_frame(span_of(out.first)));
  return true;
}

void IoLoop::flush(PeerId peer) {
  auto& queue = outboxes_[peer];
  while (!queue.empty() && try_send(peer, queue.front())) queue.pop_front();
}

void IoLoop::handle_incoming() {
  std::vector<zmq::message_t> frames;
  for (int i = 0; i < kBatch && read_multipart(router_, frames); ++i) {
    accept_incoming(frames);
    if (inbox_.queued_bytes() >= options_.inbox_limit_bytes) break;
  }
}

void IoLoop::accept_incoming(std::vector<zmq::message_t>& frames) {
  if (frames.size() != 3) return stats_.dropped("frame_count");
  const std::optional<PeerId> peer = peer_of_routing_id(frames[0]);
  if (!peer) return stats_.dropped("bad_identity");
  const Clock::time_point now = Clock::now();
  const std::optional<Admission::Screened> header =
      admission_.screen(*peer, span_of(frames[1]), span_of(frames[2]), now);
  if (!header) return;
  if (!admissible(*peer, frames[2])) return stats_.dropped("key_mismatch");
  const std::uint64_t bytes = frames[1].size() + frames[2].size();
  admission_.pass(*peer, *header, payload_of(std::move(frames[2])), bytes, now, inbox_);
}

bool IoLoop::admissible(PeerId peer, const zmq::message_t& payload) const {
  const auto it = peer_keys_.find(peer);
  if (!options_.curve || it == peer_keys_.end()) return true;  // the allow-list was the gate
  // The ZAP handler set the connection's user id to the client's key.
  const char* user = zmq_msg_gets(payload.handle(), "User-Id");
  return user && it->second == user;
}

}  // namespace starling::gossip
