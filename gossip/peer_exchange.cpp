// A peer's exchange with the others: transport, control plane and the elastic modes
// (gossip/peer_exchange.h).
#include "gossip/peer_exchange.h"

#include <algorithm>
#include <iterator>

#include "gossip/algorithms/view_topology.h"
#include "gossip/control/invitation.h"
#include "gossip/control/watch_overlay.h"
#include "gossip/topology/topology.h"
#include "gossip/transport/curve_keys.h"
#include "gossip/transport/error.h"
#include "gossip/transport/zmq/curve_pairs.h"

namespace starling::gossip {
namespace {

// Drop counts go to the log at most this often.
constexpr std::chrono::seconds kDropReportEvery{10};

PeerId self_id(const ExchangeSpec& s) { return s.peers[static_cast<std::size_t>(s.rank)].id; }

// Own pair and every other peer's public key from the keys folder; KeyFileError names the
// file that is missing or bad.
CurveSecurity load_security(const ExchangeSpec& s) {
  CurveSecurity security;
  const PeerId self = self_id(s);
  security.keys = read_keypair(s.keys_dir, peer_key_name(self));
  for (const auto& peer : s.peers) {
    if (peer.id == self) continue;
    const std::string key = read_public_key(s.keys_dir + "/" + peer_key_name(peer.id) + ".pub");
    security.allowed_keys.push_back(key);
    security.peer_keys[peer.id] = key;
  }
  security.on_refusal = s.on_refusal;
  return security;
}

// An open swarm's: its own pair, every client admitted, the known peers' keys bound.
CurveSecurity swarm_security(const ExchangeSpec& s) {
  CurveSecurity security;
  security.keys = s.swarm_keys;
  security.open = true;
  for (const auto& peer : s.peers)
    if (peer.id != self_id(s) && !peer.public_key.empty()) security.peer_keys[peer.id] = peer.public_key;
  security.on_refusal = s.on_refusal;
  return security;
}

TransportOptions transport_options(const ExchangeSpec& s) {
  TransportOptions o;
  o.self = self_id(s);
  o.bind_endpoint = s.peers[static_cast<std::size_t>(s.rank)].endpoint;
  for (const auto& peer : s.peers)
    if (peer.id != o.self) o.accept.push_back(peer.id), o.directory[peer.id] = peer.endpoint;
  o.heartbeat_interval = s.heartbeat;
  o.accept_unknown_hello = s.swarm;  // newcomers' bootstrap and join requests
  o.max_messages_per_second = s.max_messages_per_second;
  o.behind_nat = s.advertise == kBehindNat;
  o.limits.max_payload = s.max_message_bytes;
  if (!s.keys_dir.empty()) o.curve = load_security(s);
  if (!s.swarm_keys.public_key.empty()) o.curve = swarm_security(s);
  return o;
}

// This peer's neighbours in the topology over every peer (async gossip).
std::vector<PeerId> neighbours(const ExchangeSpec& s);

// The monitoring overlay over the config's ring order, and async gossip's neighbours, whose
// responsiveness it weighs (synchronous modes learn their neighbours' deaths by notice).
std::vector<PeerId> watched(const ExchangeSpec& s) {
  std::vector<PeerId> ring;
  for (const PeerAddress& peer : s.peers) ring.push_back(peer.id);
  std::vector<PeerId> out = watch_overlay(ring, self_id(s));
  if (s.mode == ExchangeMode::async_gossip)
    for (PeerId n : neighbours(s))
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

ControlOptions control_options(const ExchangeSpec& s, std::size_t parameters) {
  ControlOptions c;
  c.membership.heartbeat_interval = s.heartbeat;
  c.membership.failure_timeout = s.failure_timeout;
  c.membership.start_grace = s.start_timeout;
  c.membership.probe_timeout = 2 * s.heartbeat;  // two heartbeats for the other watchers to answer
  c.views = s.mode != ExchangeMode::async_gossip;
  c.shape.parameter_count = parameters;
  c.shape.tensor_sizes = s.tensor_sizes.empty() ? std::vector<std::uint64_t>{parameters} : s.tensor_sizes;
  c.straggler_after = std::max(std::chrono::milliseconds(1000), 2 * s.heartbeat);
  c.log = s.on_event;
  c.fault_in_served = s.fault_in_served;
  if (s.swarm) {
    // An open swarm watches every peer (the overlay is drawn over a roster it does not
    // have), and hands newcomers the endpoints it knows.
    c.swarm = SwarmAdmission{s.owner_key, s.job_description, job_id_of(s.job_description)};
    for (const PeerAddress& p : s.peers) c.endpoints[p.id] = p.endpoint;
    c.shape.endpoint = s.advertise;
  } else {
    c.watch = watched(s);
  }
  return c;
}

// This peer's neighbours in the topology over every peer (async gossip).
std::vector<PeerId> neighbours(const ExchangeSpec& s) {
  std::vector<PeerId> everyone;
  for (const PeerAddress& peer : s.peers) everyone.push_back(peer.id);
  const Topology t = topology_by_name(s.topology, static_cast<int>(s.peers.size()), view_topology_options(s, everyone));
  std::vector<PeerId> out;
  for (int r : t.neighbors(s.rank)) out.push_back(s.peers[static_cast<std::size_t>(r)].id);
  return out;
}

}  // namespace

PeerExchange::PeerExchange(const ExchangeSpec& spec, protocols::Span<float> model)
    : spec_(spec),
      model_(model),
      context_(spec.context ? spec.context : std::make_shared<TransportContext>(1)),
      last_report_(std::chrono::steady_clock::now()) {
  if (spec.rank < 0 || spec.rank >= static_cast<int>(spec.peers.size()))
    throw InvalidArgument(__FILE__, __LINE__, "exchange: rank outside the peer list");
  transport_ = std::make_unique<Transport>(*context_, transport_options(spec));
  std::vector<PeerId> ids;
  for (const auto& peer : spec.peers) ids.push_back(peer.id);
  control_ = std::make_unique<ControlPlane>(*transport_, ids, control_options(spec, model.size()));
  if (spec.mode == ExchangeMode::async_gossip)
    async_ = std::make_unique<ElasticAsync>(*transport_, *control_, spec, model, neighbours(spec));
  else if (spec.mode != ExchangeMode::none)
    sync_ = std::make_unique<ElasticSync>(*transport_, *control_, spec, model);
}

PeerExchange::~PeerExchange() {
  control_.reset();  // uninstalls its hook before the transport goes
  if (transport_) transport_->stop();
}

std::optional<Position> PeerExchange::start(uint64_t iteration) {
  if (sync_) return sync_->start(iteration);
  if (async_) return async_->start(iteration);
  return std::nullopt;
}

std::optional<Position> PeerExchange::exchange(uint64_t iteration, double compute_seconds) {
  std::optional<Position> moved;
  if (sync_) moved = sync_->exchange(iteration, compute_seconds);
  else if (async_) moved = async_->exchange(iteration);
  report_drops();
  return moved;
}

void PeerExchange::finish() {
  if (sync_) sync_->finish();
  if (async_) async_->finish();
  const TransportStats s = transport_->stats();
  if (spec_.on_event && (s.relayed_for_others > 0 || s.sent_through_relay > 0))
    spec_.on_event("relays: passed on " + std::to_string(s.relayed_for_others) + " bytes between other peers; sent " +
                   std::to_string(s.sent_through_relay) + " of this peer's " + std::to_string(s.bytes_sent()) +
                   " bytes through a relay");
}

std::optional<double> PeerExchange::mean_staleness() const {
  if (!async_ || async_->stats().runs == 0) return std::nullopt;
  return static_cast<double>(async_->stats().gap_sum) / static_cast<double>(async_->stats().runs);
}

uint64_t PeerExchange::bytes_sent() const { return transport_->stats().bytes_sent(); }

uint64_t PeerExchange::bytes_received() const { return transport_->stats().bytes_received(); }

uint64_t PeerExchange::control_messages_sent() const { return transport_->stats().control_sent; }

uint64_t PeerExchange::control_messages_received() const { return transport_->stats().control_received; }

std::map<std::string, std::uint64_t> PeerExchange::drops() const {
  std::map<std::string, std::uint64_t> all = transport_->stats().drops;
  for (const auto& [reason, count] : control_->drops()) all[reason] += count;
  const auto algorithms = sync_ ? sync_->drops() : async_ ? async_->drops() : std::map<std::string, std::uint64_t>{};
  for (const auto& [reason, count] : algorithms) all[reason] += count;
  return all;
}

std::map<PeerId, NeighbourStats> PeerExchange::neighbour_stats() const {
  return sync_ ? sync_->neighbour_stats() : async_ ? async_->neighbour_stats() : std::map<PeerId, NeighbourStats>{};
}

std::vector<PeerId> PeerExchange::members() const { return sync_ ? sync_->view().members : std::vector<PeerId>{}; }

std::vector<PeerStatus> PeerExchange::peer_status() const {
  const TransportStats stats = transport_->stats();
  const auto heard = transport_->liveness();
  const auto watched = control_->watched();
  const auto now = std::chrono::steady_clock::now();
  std::vector<PeerStatus> out;
  for (const PeerAddress& p : spec_.peers) {
    if (p.id == spec_.peers[static_cast<std::size_t>(spec_.rank)].id) continue;
    PeerStatus s;
    s.id = p.id, s.endpoint = p.endpoint;
    if (const auto it = stats.peers.find(p.id); it != stats.peers.end()) s.traffic = it->second;
    if (const auto it = heard.find(p.id); it != heard.end())
      s.silent_seconds = std::chrono::duration<double>(now - it->second.last_heard).count();
    s.alive = control_->alive(p.id);
    s.finished = control_->finished().count(p.id) != 0;
    const bool watching = std::find(watched.begin(), watched.end(), p.id) != watched.end();
    s.suspected = s.alive && watching && !control_->responsive(p.id);
    out.push_back(std::move(s));
  }
  return out;
}

// At most one line per kDropReportEvery: what was dropped since the last one, by reason.
void PeerExchange::report_drops() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_report_ < kDropReportEvery || !spec_.on_event) return;
  const auto all = drops();
  std::string line;
  std::uint64_t total = 0;
  for (const auto& [reason, count] : all) {
    const std::uint64_t fresh = count - reported_[reason];
    if (fresh == 0) continue;
    total += fresh;
    line += (line.empty() ? "" : ", ") + reason + " " + std::to_string(fresh);
  }
  const double seconds = std::chrono::duration<double>(now - last_report_).count();
  last_report_ = now;
  reported_ = all;
  if (total > 0)
    spec_.on_event("dropped " + std::to_string(total) + " message(s) in the last " +
                   std::to_string(static_cast<int>(seconds)) + " s: " + line);
}

}  // namespace starling::gossip
