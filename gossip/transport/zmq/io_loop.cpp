// The transport's I/O thread: socket ownership, polling, validation (gossip/transport/zmq/io_loop.h).
#include "gossip/transport/zmq/io_loop.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <zmq.h>

#include "gossip/transport/error.h"
#include "gossip/transport/heartbeat_frame.h"
#include "gossip/transport/link.h"
#include "gossip/transport/zmq/peer_identity.h"
#include "gossip/transport/zmq/relay_envelope.h"
#include "gossip/transport/zmq/zmq_bridge.h"
#include "protocols/byte_io.h"

namespace starling::gossip {

namespace {

// Messages drained per readiness event, so one busy socket cannot starve the others.
constexpr int kBatch = 64;
constexpr std::size_t kMaxFrames = 4;
// How often frames held for a reverse or relayed route are tried again (nothing to poll for).
constexpr std::chrono::milliseconds kIndirectRetry{5};
// Heartbeats a relay may miss before the next dialed peer relays instead.
constexpr int kRelayMissedBeats = 3;

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

// Sends the parts as one message without blocking; false, nothing sent, when the socket
// would block or a ROUTER's peer is not connected (ZMQ_ROUTER_MANDATORY). Once the first
// part is queued ZeroMQ accepts the rest.
bool send_all(zmq::socket_t& socket, zmq::message_t* routing_id, std::initializer_list<zmq::message_t*> parts) {
  std::size_t sent = 0;
  try {
    if (routing_id && !socket.send(*routing_id, zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
    sent = routing_id ? 1 : 0;
    for (zmq::message_t* part : parts) {
      const bool last = part == *(parts.end() - 1);
      const auto flags = last ? zmq::send_flags::dontwait : zmq::send_flags::sndmore | zmq::send_flags::dontwait;
      if (!socket.send(*part, flags)) return false;
      ++sent;
    }
  } catch (const zmq::error_t& e) {
    if (sent == 0 && e.num() == EHOSTUNREACH) return false;
    throw;
  }
  return true;
}

zmq::message_t routing_frame(PeerId peer) {
  const std::string id = routing_id_of(peer);
  return zmq::message_t(id.data(), id.size());
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
  // A reverse route's frames wait in the outbox until its peer has dialed in, not vanish.
  router_.set(zmq::sockopt::router_mandatory, true);
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
  box_.emplace(curve.keys);
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
  std::vector<PeerId> polled;
  while (!stopping_) {
    // Stop reading the network while the owner is behind; ZeroMQ's HWM and TCP then push back.
    const bool reading = inbox_.queued_bytes() < options_.inbox_limit_bytes;
    items.clear();
    polled.clear();
    items.push_back({control_.handle(), 0, ZMQ_POLLIN, 0});
    items.push_back({router_.handle(), 0, static_cast<short>(reading ? ZMQ_POLLIN : 0), 0});
    if (monitor_.handle() != nullptr) items.push_back({monitor_.handle(), 0, ZMQ_POLLIN, 0});
    const std::size_t first_dealer = items.size();
    for (auto& [peer, dealer] : dealers_) {
      const auto queue = outboxes_.find(peer);
      const bool held = queue != outboxes_.end() && !queue->second.empty();
      const short events = static_cast<short>((reading ? ZMQ_POLLIN : 0) | (held ? ZMQ_POLLOUT : 0));
      if (events == 0) continue;
      items.push_back({dealer.handle(), 0, events, 0});
      polled.push_back(peer);
    }
    zmq::poll(items, poll_timeout(reading));
    if (options_.heartbeat_interval.count() > 0 && Clock::now() >= next_heartbeat_) send_heartbeats(Clock::now());
    if (items[1].revents & ZMQ_POLLIN) handle_incoming();
    if (monitor_.handle() != nullptr && (items[2].revents & ZMQ_POLLIN)) handle_monitor_events();
    for (std::size_t i = 0; i < polled.size(); ++i) {
      const short revents = items[first_dealer + i].revents;
      if (revents & ZMQ_POLLIN) handle_dealer(polled[i], dealers_.at(polled[i]));
      if (revents & ZMQ_POLLOUT) flush(polled[i]);
    }
    flush_indirect();
    if (items[0].revents & ZMQ_POLLIN) handle_commands();
  }
}

std::chrono::milliseconds IoLoop::poll_timeout(bool reading) const {
  std::chrono::milliseconds wait(reading ? 100 : 1);
  for (const auto& [peer, queue] : outboxes_)
    if (!queue.empty() && !dealers_.count(peer)) wait = std::min(wait, kIndirectRetry);
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
  std::vector<PeerId> routes;
  for (const auto& [peer, dealer] : dealers_) routes.push_back(peer);
  routes.insert(routes.end(), reverse_.begin(), reverse_.end());
  routes.insert(routes.end(), relayed_.begin(), relayed_.end());
  for (PeerId peer : routes) {
    if (watched && !watched->count(peer)) continue;
    const auto queue = outboxes_.find(peer);
    if (queue != outboxes_.end() && !queue->second.empty()) continue;
    Outgoing beat{zmq::message_t(head.data(), head.size()), zmq::message_t(payload.data(), payload.size()), {}};
    try_send(peer, beat);
  }
  next_heartbeat_ = now + options_.heartbeat_interval;
  if (!relayed_.empty()) choose_relay(now);
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
      reverse_.erase(peer);
      relayed_.erase(peer);
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
  if (routed(peer)) return reply(false, "peer " + std::to_string(peer) + " already connected");
  if (endpoint == kBehindNat) {
    (options_.behind_nat ? relayed_ : reverse_).insert(peer);
    admission_.accept(peer);
    if (options_.curve) peer_keys_[peer] = server_key;  // its DEALER dials in under this key
    return reply(true, "");
  }
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

bool IoLoop::routed(PeerId peer) const {
  return dealers_.count(peer) || reverse_.count(peer) || relayed_.count(peer);
}

void IoLoop::do_send(PeerId peer, zmq::message_t header, zmq::message_t payload) {
  if (!routed(peer)) return stats_.dropped("unknown_destination");
  enqueue(peer, Outgoing{std::move(header), std::move(payload), {}});
}

void IoLoop::enqueue(PeerId peer, Outgoing out) {
  auto& queue = outboxes_[peer];
  if (queue.empty() && try_send(peer, out)) return;
  queue.push_back(std::move(out));
}

bool IoLoop::try_send(PeerId peer, Outgoing& out) {
  const std::uint64_t bytes = out.header.size() + out.payload.size();
  const bool control = protocols::is_control_frame(span_of(out.header));  // before sending empties it
  if (out.relayed_from) {
    zmq::message_t envelope = encode_relay_envelope({RelayEnvelope::Direction::from, *out.relayed_from});
    if (!send_direct(peer, {&envelope, &out.header, &out.payload})) return false;
    stats_.forwarded(bytes);
    return true;
  }
  if (relayed_.count(peer)) {
    if (!send_through_relay(peer, out)) return false;
    stats_.sent_through_relay(bytes);
  } else if (!send_direct(peer, {&out.header, &out.payload})) {
    // A peer behind NAT that has not dialed this one cannot be reached directly: a newcomer's
    // hello to it goes through a relay, so that it learns of this peer and dials it.
    if (!reverse_.count(peer) || !hello(out.header) || !send_through_relay(peer, out)) return false;
  }
  stats_.sent(peer, bytes, control);
  return true;
}

// Over the DEALER dialed to `peer`, or else the connection `peer` dialed in on.
bool IoLoop::send_direct(PeerId peer, std::initializer_list<zmq::message_t*> parts) {
  if (const auto dealer = dealers_.find(peer); dealer != dealers_.end()) return send_all(dealer->second, nullptr, parts);
  zmq::message_t id = routing_frame(peer);
  return send_all(router_, &id, parts);
}

// Dialed peers are reachable, and a peer behind NAT dials every peer it talks to, so any
// dialed peer can relay. One relay at a time keeps a pair's frames in order.
bool IoLoop::send_through_relay(PeerId peer, Outgoing& out) {
  const auto chosen = relay_ ? dealers_.find(*relay_) : dealers_.end();
  const auto relay = chosen != dealers_.end() ? chosen : dealers_.begin();
  if (relay == dealers_.end()) return false;
  if (!box_) {
    zmq::message_t envelope = encode_relay_envelope({RelayEnvelope::Direction::to, peer});
    return send_all(relay->second, nullptr, {&envelope, &out.header, &out.payload});
  }
  const auto key = peer_keys_.find(peer);
  std::optional<zmq::message_t> sealed;
  if (key != peer_keys_.end()) sealed = box_->seal(key->second, out.header, out.payload);
  if (!sealed) return stats_.dropped("relay_no_key"), true;  // connect() gave every route a key
  zmq::message_t envelope = encode_relay_envelope({hello(out.header) ? RelayEnvelope::Direction::hello_to
                                                                      : RelayEnvelope::Direction::to, peer});
  zmq::message_t empty;
  return send_all(relay->second, nullptr, {&envelope, &*sealed, &empty});
}

// The first dialed peer heard from lately relays, so that a dead relay is passed over within
// a few heartbeats, before the owner has declared it dead; none heard: the first dialed.
void IoLoop::choose_relay(Clock::time_point now) {
  relay_.reset();
  const auto heard = stats_.liveness();
  for (const auto& [peer, dealer] : dealers_) {
    const auto it = heard.find(peer);
    if (it != heard.end() && now - it->second.last_heard < kRelayMissedBeats * options_.heartbeat_interval) {
      relay_ = peer;
      break;
    }
  }
  stats_.relay_is(relay_ ? *relay_ : dealers_.empty() ? StatsRecorder::kNoRelay : dealers_.begin()->first);
}

void IoLoop::flush(PeerId peer) {
  auto& queue = outboxes_[peer];
  while (!queue.empty() && try_send(peer, queue.front())) queue.pop_front();
}

void IoLoop::flush_indirect() {
  for (auto& [peer, queue] : outboxes_)
    if (!queue.empty() && !dealers_.count(peer)) flush(peer);
}

void IoLoop::handle_incoming() {
  std::vector<zmq::message_t> frames;
  for (int i = 0; i < kBatch && read_multipart(router_, frames); ++i) {
    const std::optional<PeerId> peer = frames.empty() ? std::nullopt : peer_of_routing_id(frames[0]);
    if (frames.size() != 3 && frames.size() != 4) stats_.dropped("frame_count");
    else if (!peer) stats_.dropped("bad_identity");
    else if (frames.size() == 3) accept_frames(*peer, frames[1], frames[2]);
    else accept_enveloped(*peer, frames[1], frames[2], frames[3]);
    if (inbox_.queued_bytes() >= options_.inbox_limit_bytes) break;
  }
}

// What a peer sends back over the connection this one dialed: its reverse route's frames.
void IoLoop::handle_dealer(PeerId peer, zmq::socket_t& dealer) {
  std::vector<zmq::message_t> frames;
  for (int i = 0; i < kBatch && read_multipart(dealer, frames); ++i) {
    if (frames.size() == 2) accept_frames(sender_over_dealer(peer, frames[0]), frames[0], frames[1], true);
    else if (frames.size() == 3) accept_enveloped(peer, frames[0], frames[1], frames[2]);
    else stats_.dropped("frame_count");
    if (inbox_.queued_bytes() >= options_.inbox_limit_bytes) break;
  }
}

// Who sent a frame that came over the DEALER of route `route`: the sender the header names,
// as on the ROUTER, where the routing id is the far end's own claim too. With CURVE the key
// dialed vouches for the far end, which may name the route's id, an id bound to the same key,
// or one bound to none; otherwise the route's id stands (and the header's is a mismatch). A
// route opened before the peer's id was known (a newcomer asking a seed) carries another id
// than its peer's.
PeerId IoLoop::sender_over_dealer(PeerId route, const zmq::message_t& head) const {
  const protocols::Result<protocols::FrameHeader> header = protocols::decode_header(span_of(head), options_.limits);
  if (!header || !options_.curve || header->sender == route) return header ? header->sender : route;
  const auto claimed = peer_keys_.find(header->sender), dialed = peer_keys_.find(route);
  if (claimed == peer_keys_.end()) return header->sender;
  return dialed != peer_keys_.end() && claimed->second == dialed->second ? header->sender : route;
}

bool IoLoop::hello(const zmq::message_t& head) const {
  const protocols::Result<protocols::FrameHeader> header = protocols::decode_header(span_of(head), options_.limits);
  return header && header->type == protocols::MessageType::hello;
}

void IoLoop::accept_frames(PeerId peer, zmq::message_t& head, zmq::message_t& payload, bool dialed) {
  const Clock::time_point now = Clock::now();
  const std::optional<Admission::Screened> header = admission_.screen(peer, span_of(head), span_of(payload), now);
  if (!header) return;
  if (!(dialed && options_.curve) && !admissible(peer, payload)) return stats_.dropped("key_mismatch");
  const std::uint64_t bytes = head.size() + payload.size();
  admission_.pass(peer, *header, payload_of(std::move(payload)), bytes, now, inbox_);
}

bool IoLoop::admissible(PeerId peer, const zmq::message_t& payload) const {
  const auto it = peer_keys_.find(peer);
  if (!options_.curve || it == peer_keys_.end()) return true;  // the allow-list was the gate
  // The ZAP handler set the connection's user id to the client's key.
  const char* user = zmq_msg_gets(payload.handle(), "User-Id");
  return user && it->second == user;
}

// A frame in a relay envelope from a known peer `via`: one it relays for another peer, which
// is then screened as that peer's own, or one to pass on. A newcomer's hellos reach the
// peers behind NAT through a relay before the relay knows it, as they reach others directly.
void IoLoop::accept_enveloped(PeerId via, const zmq::message_t& envelope, zmq::message_t& head,
                              zmq::message_t& payload) {
  const std::optional<RelayEnvelope> e = decode_relay_envelope(envelope);
  if (!e) return stats_.dropped("bad_envelope");
  const bool greeting = box_ ? e->direction == RelayEnvelope::Direction::hello_to : hello(head);
  if (!admission_.knows(via) && !(options_.accept_unknown_hello && greeting)) return stats_.dropped("unknown_sender");
  if (e->direction == RelayEnvelope::Direction::from) {
    if (!box_) return accept_frames(e->peer, head, payload);
    if (payload.size() != 0) return stats_.dropped("relay_box_failed");
    return accept_boxed(e->peer, head);
  }
  if (admission_.relay_within_rate(via, Clock::now())) relay(via, e->peer, head, payload);
}

// A frame `origin` sent through a relay in a box: opened under the key `origin` is bound to
// (a newcomer's hello: the box's own), then screened as a frame of `origin`'s.
void IoLoop::accept_boxed(PeerId origin, const zmq::message_t& box) {
  const auto bound = peer_keys_.find(origin);
  std::string why;
  std::optional<RelayBox::Opened> opened = box_->open(origin, bound == peer_keys_.end() ? nullptr : &bound->second, box, why);
  if (!opened) return stats_.dropped(why);
  const Clock::time_point now = Clock::now();
  const std::optional<Admission::Screened> header =
      admission_.screen(origin, span_of(opened->header), span_of(opened->payload), now);
  if (!header) return;
  const std::uint64_t bytes = opened->header.size() + opened->payload.size();
  admission_.pass(origin, *header, payload_of(std::move(opened->payload), opened->key), bytes, now, inbox_);
}

// Passes a frame on between two peers this one knows, in order with its own frames to `to`
// (held, as they are, until `to` has dialed in), or at once over the connection `to` dialed in
// on when this peer has no route to it. A reachable peer relays; one behind NAT refuses.
void IoLoop::relay(PeerId from, PeerId to, zmq::message_t& head, zmq::message_t& payload) {
  if (options_.behind_nat || to == options_.self || !admission_.knows(to)) return stats_.dropped("relay_refused");
  Outgoing out{std::move(head), std::move(payload), from};
  if (routed(to)) return enqueue(to, std::move(out));
  if (!try_send(to, out)) stats_.dropped("relay_unroutable");
}

}  // namespace starling::gossip
