// The owner's side of a transport, whatever link carries its frames (gossip/transport/transport.h).
#include "gossip/transport/transport.h"

#include <vector>

#include "gossip/transport/curve_keys.h"
#include "gossip/transport/error.h"

namespace starling::gossip {

Transport::Transport(LinkFactory& links, TransportOptions options) : options_(std::move(options)) {
  link_ = links.open(options_, inbox_, stats_);
  endpoint_ = link_->endpoint();
}

Transport::~Transport() {
  try {
    stop();
  } catch (const std::exception&) {
    // A destructor must not throw; the link has let go of its thread before any error surfaces.
  }
}

void Transport::require_running() const {
  if (stopped_ || inbox_.closed()) STARLING_GOSSIP_THROW(IoError, "transport is stopped");
}

void Transport::connect(PeerId peer, const std::string& endpoint) {
  if (!options_.curve) return connect_with(peer, endpoint, nullptr);
  const auto it = options_.curve->peer_keys.find(peer);
  if (it == options_.curve->peer_keys.end())
    STARLING_GOSSIP_THROW(InvalidArgument, "CURVE: no public key for peer " + std::to_string(peer));
  connect_with(peer, endpoint, &it->second);
}

void Transport::connect(PeerId peer, const std::string& endpoint, const std::string& server_public_key) {
  if (server_public_key.empty()) return connect(peer, endpoint);
  if (!options_.curve) STARLING_GOSSIP_THROW(InvalidArgument, "a server key needs CURVE security in the options");
  if (!is_z85_key(server_public_key))
    STARLING_GOSSIP_THROW(InvalidArgument, "public key of peer " + std::to_string(peer) + " is not a Z85 CURVE key");
  options_.curve->peer_keys[peer] = server_public_key;  // a route opened again later goes there too
  connect_with(peer, endpoint, &server_public_key);
}

std::string Transport::public_key_of(PeerId peer) const {
  if (!secure()) return {};
  const auto it = options_.curve->peer_keys.find(peer);
  return it == options_.curve->peer_keys.end() ? std::string() : it->second;
}

void Transport::connect_with(PeerId peer, const std::string& endpoint, const std::string* server_key) {
  if (routes_.count(peer)) STARLING_GOSSIP_THROW(InvalidArgument, "already connected to peer " + std::to_string(peer));
  require_running();
  link_->connect(peer, endpoint, server_key);
  routes_.insert(peer);
}

void Transport::admit(const std::string& public_key) {
  if (!secure()) STARLING_GOSSIP_THROW(InvalidArgument, "admit: this transport has no CURVE security");
  if (!is_z85_key(public_key)) STARLING_GOSSIP_THROW(InvalidArgument, "admit: not a Z85 CURVE key");
  link_->admit(public_key);
}

void Transport::disconnect(PeerId peer) {
  require_running();
  if (routes_.erase(peer)) link_->disconnect(peer);
}

void Transport::accept_from(PeerId peer) {
  require_running();
  link_->accept(peer);
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
  link_->watch(std::move(beat));
}

void Transport::send_encoded(PeerId to, std::vector<std::uint8_t>& head, Payload payload) {
  connect_on_demand(to);
  if (payload.size() > UINT32_MAX) STARLING_GOSSIP_THROW(InvalidArgument, "payload over 4 GiB");
  require_running();
  link_->send(to, Payload(protocols::ByteSpan(head.data(), head.size())), std::move(payload));
}

void Transport::announce(std::uint64_t view, std::uint64_t round) { link_->announce(view, round); }

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
  if (stopped_) return;
  stopped_ = true;
  link_->stop();
}

}  // namespace starling::gossip
