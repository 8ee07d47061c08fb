#include "gossip/peer_exchange.h"

#include "gossip/curve_keys.h"
#include "gossip/endpoint.h"
#include "gossip/error.h"
#include "gossip/mixing_schedule.h"
#include "gossip/topology.h"

#include <set>

namespace starling::gossip {
namespace {

const char* const kModeNames[] = {"none", "allreduce", "gossip", "local-sgd", "async-gossip"};
const char* const kTopologies[] = {"ring", "torus", "exponential", "one-peer-exponential", "complete", "random"};

Topology make_topology(const ExchangeSpec& s) {
  const int p = static_cast<int>(s.peers.size());
  if (s.topology == "torus") return torus(p);
  if (s.topology == "exponential" || s.topology == "one-peer-exponential") return exponential(p);
  if (s.topology == "complete") return complete(p);
  if (s.topology == "random") return random_regular(p, s.random_degree, s.seed);
  return ring(p);
}

MixingSchedule make_schedule(const ExchangeSpec& s) {
  if (s.topology == "one-peer-exponential") return one_peer_exponential_schedule(static_cast<int>(s.peers.size()), s.rank);
  return metropolis_schedule(make_topology(s), s.rank);
}

// The ranks this peer sends to and hears from over all rounds of its mode.
std::pair<std::set<int>, std::set<int>> links(const ExchangeSpec& s) {
  const int p = static_cast<int>(s.peers.size());
  std::set<int> out, in;
  if (s.mode == ExchangeMode::async_gossip) {
    const Topology topology = make_topology(s);
    for (int r : topology.neighbors(s.rank)) out.insert(r), in.insert(r);
  } else if (s.mode == ExchangeMode::gossip) {
    const MixingSchedule schedule = make_schedule(s);
    for (std::uint64_t round = 0; round < 64; ++round) {  // covers every rotation of the SGP schedule
      const MixingPlan plan = schedule(round);
      out.insert(plan.send_to.begin(), plan.send_to.end());
      for (const auto& [rank, weight] : plan.receive_from) in.insert(rank);
    }
  }
  if (p > 1 && (s.mode != ExchangeMode::gossip || s.final_average) && s.mode != ExchangeMode::async_gossip) {
    out.insert((s.rank + 1) % p);  // the all-reduce ring
    in.insert((s.rank + p - 1) % p);
  }
  return {out, in};
}

// Own pair and every other peer's public key from the keys folder; KeyFileError names the
// file that is missing or bad.
CurveSecurity load_security(const ExchangeSpec& s) {
  CurveSecurity security;
  const PeerId self = s.peers[static_cast<std::size_t>(s.rank)].id;
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

}  // namespace

std::string peer_key_name(PeerId id) { return "peer" + std::to_string(id); }

bool parse_exchange_mode(const std::string& text, ExchangeMode& out) {
  for (int i = 0; i < 5; ++i)
    if (text == kModeNames[i]) {
      out = static_cast<ExchangeMode>(i);
      return true;
    }
  return false;
}

const char* exchange_mode_name(ExchangeMode mode) { return kModeNames[static_cast<int>(mode)]; }

bool is_topology_name(const std::string& name) {
  for (const char* t : kTopologies)
    if (name == t) return true;
  return false;
}

PeerExchange::PeerExchange(const ExchangeSpec& spec, protocols::Span<float> model)
    : spec_(spec), model_(model), context_(1) {
  if (spec.rank < 0 || spec.rank >= static_cast<int>(spec.peers.size()))
    throw InvalidArgument(__FILE__, __LINE__, "exchange: rank outside the peer list");
  const auto [out, in] = links(spec);
  TransportOptions options;
  options.self = spec.peers[static_cast<std::size_t>(spec.rank)].id;
  options.bind_endpoint = bind_endpoint_for(spec.peers[static_cast<std::size_t>(spec.rank)].endpoint);
  for (int r : in) options.accept.push_back(spec.peers[static_cast<std::size_t>(r)].id);
  if (!spec.keys_dir.empty()) options.curve = load_security(spec);
  transport_ = std::make_unique<Transport>(context_, options);
  for (int r : out) transport_->connect(spec.peers[static_cast<std::size_t>(r)].id, spec.peers[static_cast<std::size_t>(r)].endpoint);

  std::vector<PeerId> ids;
  for (const auto& peer : spec.peers) ids.push_back(peer.id);
  if (spec.mode == ExchangeMode::gossip && spec.codec != "none") {
    ChocoOptions c;
    c.gamma = spec.gamma;
    c.timeout = spec.timeout;
    c.first_round = spec.first_round;
    choco_ = std::make_unique<ChocoGossip>(*transport_, ids, make_schedule(spec), spec.codec, spec.codec_options, c);
  } else if (spec.mode == ExchangeMode::gossip) {
    GossipOptions g;
    g.timeout = spec.timeout;
    g.first_round = spec.first_round;
    gossip_ = std::make_unique<GossipAverage>(*transport_, ids, make_schedule(spec), g);
  } else if (spec.mode == ExchangeMode::async_gossip) {
    AsyncGossipOptions a;
    a.max_staleness = spec.max_staleness;
    a.staleness_scaling = spec.staleness_scaling;
    a.timeout = spec.timeout;
    a.seed = spec.seed + static_cast<uint64_t>(spec.rank);
    std::vector<PeerId> neighbours;
    for (int r : links(spec).first) neighbours.push_back(spec.peers[static_cast<std::size_t>(r)].id);
    async_ = std::make_unique<AsyncGossip>(*transport_, neighbours, a);
  } else if (spec.mode != ExchangeMode::none && spec.codec != "none") {
    CompressedAllreduceOptions c;
    c.timeout = spec.timeout;
    compressed_ = std::make_unique<CompressedAllreduce>(*transport_, ids, model, spec.codec, spec.codec_options, c);
  } else if (spec.mode != ExchangeMode::none) {
    AllreduceOptions a;
    a.timeout = spec.timeout;
    a.first_round = spec.first_round;
    ring_ = std::make_unique<AllreduceRing>(*transport_, ids, model, a);
  }
  if (spec.mode == ExchangeMode::gossip && spec.final_average) {
    AllreduceOptions a;
    a.timeout = spec.timeout;
    final_ring_ = std::make_unique<AllreduceRing>(*transport_, ids, model, a);
  }
  if (spec.adaptive && (choco_ || compressed_)) {
    AdaptiveCompressionOptions a = spec.adaptive_options;
    a.initial_density = spec.codec_options.density;
    adaptive_ = std::make_unique<AdaptiveCompression>(a);
  }
}

PeerExchange::~PeerExchange() {
  if (transport_) transport_->stop();
}

void PeerExchange::exchange(uint64_t step, double compute_seconds) {
  if (gossip_) gossip_->run(model_);
  else if (choco_ || compressed_) run_compressed(compute_seconds);
  else if (async_) async_->run(model_, step);
  else if (ring_) ring_->run();
}

// One CHOCO round or compressed all-reduce, timed, and the density for the next one when
// it adapts.
void PeerExchange::run_compressed(double compute_seconds) {
  const auto start = Transport::Clock::now();
  if (choco_) choco_->run(model_);
  else compressed_->run();
  // The compressed all-reduce's first run is uncompressed: it says nothing about the density.
  if (!adaptive_ || (compressed_ && compressed_->runs() == 1)) return;
  const double comm = std::chrono::duration<double>(Transport::Clock::now() - start).count();
  const DensityDecision decision = adaptive_->observe(compute_seconds, comm);
  if (!decision.changed) return;
  if (choco_) choco_->set_density(decision.density);
  else compressed_->set_density(decision.density);
  if (spec_.on_adjust) spec_.on_adjust(decision.report);
}

void PeerExchange::average_models() {
  if (!final_ring_) return;
  transport_->release_held();  // segments of peers that finished their last round first
  final_ring_->run();
}

void PeerExchange::finish() {
  if (async_) async_->finish(model_);
}

std::optional<double> PeerExchange::mean_staleness() const {
  if (!async_ || async_->stats().runs == 0) return std::nullopt;
  return static_cast<double>(async_->stats().gap_sum) / static_cast<double>(async_->stats().runs);
}

uint64_t PeerExchange::bytes_sent() const { return transport_->stats().bytes_sent(); }

uint64_t PeerExchange::bytes_received() const { return transport_->stats().bytes_received(); }

}  // namespace starling::gossip
