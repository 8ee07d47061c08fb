#include "simulator/scaling_model.h"

#include "gossip/control/watch_overlay.h"
#include "gossip/topology/d_cliques.h"
#include "gossip/topology/topology.h"
#include "protocols/codec_row.h"
#include "simulator/collectives.h"
#include "simulator/event_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace starling::simulator {
namespace {

using gossip::ExchangeMode;

constexpr int kMaxPeers = 1024;
constexpr int kMaxStepsPerOrder = 64;  // the node's longest order (actors/node_actor.cpp)

// How the codec's payloads join an all-reduce (its row's route); a name this build lacks
// was refused by the probe that measured it.
protocols::AllreduceRoute route_of(const std::string& codec) {
  const protocols::CodecRow* row = protocols::codec_row(codec);
  return row ? row->route : protocols::AllreduceRoute::gather;
}

// A figure measured among q peers on one host at a few q: linear in between, and beyond the
// largest measured q proportional to q (the q peers' threads then share the cores).
double at_peers(const std::map<int, double>& measured, int q) {
  auto hi = measured.lower_bound(q);
  if (hi == measured.end()) {
    const auto& [last_q, last] = *measured.rbegin();
    return last * q / last_q;
  }
  if (hi->first == q || hi == measured.begin()) return hi->second;
  const auto lo = std::prev(hi);
  const double f = static_cast<double>(q - lo->first) / (hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

// The latency of a ring step among q peers on one host (each step waits for the context
// switches of q peers' threads).
double crowded_latency(const Measured& m, int q) {
  return m.crowded_latency.empty() ? m.loopback.alpha_seconds : at_peers(m.crowded_latency, q);
}

int host_peers(const Cluster& c) { return std::min(c.peers, peers_per_host(c)); }

Wire wire_for(const Measured& m, const Cluster& c, int cores) {
  const int q = host_peers(c);
  Wire w;
  double beta = c.network.link.beta_bytes_per_second;
  if (c.network.loopback) {
    w.alpha = q > 1 ? crowded_latency(m, q) : m.loopback.alpha_seconds;
    beta = m.loopback.beta_bytes_per_second;
  } else {
    w.alpha = c.network.link.alpha_seconds + (q > 1 ? std::max(0.0, crowded_latency(m, q) - m.loopback.alpha_seconds) : 0.0);
  }
  w.cpu_seconds_per_byte = q * m.loopback.cpu_seconds_per_byte / std::min(cores, 2 * q);
  w.seconds_per_byte = std::max(1.0 / beta, w.cpu_seconds_per_byte);
  // On loopback the host's peers stream at once: where that was measured, it is the wire.
  if (c.network.loopback && q > 1 && !m.crowded_seconds_per_byte.empty())
    w.seconds_per_byte = std::max(1.0 / beta, at_peers(m.crowded_seconds_per_byte, q));
  return w;
}

// Out-degree of one gossip round on the config's topology (its largest, where they differ).
int gossip_degree(const Workload& work, int p) {
  if (p < 2) return 0;
  if (work.topology == "one-peer-exponential") return 1;
  const gossip::Topology t = gossip::topology_by_name(work.topology, p, work.topology_options);
  int degree = 0;
  for (int r = 0; r < p; ++r) degree = std::max(degree, t.degree(r));
  return degree;
}

// Peers in the largest clique of the config's D-Cliques over p peers.
int largest_clique(const Workload& work, int p) {
  std::size_t largest = 1;
  for (const auto& clique : gossip::build_d_cliques(p, work.topology_options).cliques) largest = std::max(largest, clique.size());
  return static_cast<int>(largest);
}

// One exchange of the config's mode and codec among p peers. `cpu_share` stretches the
// exchange's CPU work (reductions, mixing, encode and decode) as compute is stretched: on a
// host whose peers outnumber its cores, every peer does that work at the same time as the
// others, on the same cores.
Cost exchange_cost(const Workload& work, const Measured& m, int p, const Wire& wire, double cpu_share = 1.0) {
  if (p < 2) return {};
  const double n = work.parameters, bytes = 4 * n, add = m.add_seconds_per_element * cpu_share;
  const double enc = m.codec.encode_seconds_per_element * cpu_share, dec = m.codec.decode_seconds_per_element * cpu_share;
  const double w = m.codec.wire_bytes;
  const bool plain = work.codec == "none";
  switch (work.mode) {
    case ExchangeMode::allreduce:
    case ExchangeMode::local_sgd: {
      if (plain) return ring_allreduce(p, bytes, n, wire, add);
      switch (route_of(work.codec)) {
        case protocols::AllreduceRoute::ring: {  // every hop decodes, adds and encodes again
          Cost c = ring_allreduce(p, w, n, wire, add);
          c.seconds += 2.0 * (p - 1) / p * n * (enc + dec);
          return c;
        }
        case protocols::AllreduceRoute::gather: {
          Cost c = ring_allgather(p, w, wire);
          c.seconds += n * enc + p * n * dec;
          return c;
        }
        case protocols::AllreduceRoute::low_rank: {  // two reductions (P, then Q) of the factors
          Cost c = ring_allreduce(p, w, w / 4, wire, add);
          c.seconds += 2.0 * (p - 1) * wire.alpha + n * (enc + dec);
          return c;
        }
      }
      return {};
    }
    case ExchangeMode::push_sum:  // D-PSGD's round with one more float, the push-sum weight
    case ExchangeMode::exact_diffusion:
    case ExchangeMode::gossip: {
      const int d = gossip_degree(work, p);
      if (plain) {
        Cost c = neighbour_push(d, bytes, wire);
        c.seconds += (d + 1) * n * add;
        return c;
      }
      // CHOCO-SGD (gossip/algorithms/choco_gossip.cpp) per round: the change x − x̂ (a pass over n), its
      // encoding, its decoding into the own public copy and each neighbour's decoded into
      // theirs, and the mix x += γ Σ W_ij (x̂_j − x̂_i) (a pass per neighbour and the own copy).
      Cost c = neighbour_push(d, w, wire);
      c.seconds += n * enc + (d + 1) * n * dec + (d + 2) * n * add;
      return c;
    }
    case ExchangeMode::clique_averaging: {
      // The change to the clique, then the model to every neighbour (gossip/algorithms/clique_averaging_sync.h).
      const int d = gossip_degree(work, p), c = largest_clique(work, p) - 1;
      const Cost to_clique = neighbour_push(c, bytes, wire), to_neighbours = neighbour_push(d, bytes, wire);
      return {to_clique.seconds + to_neighbours.seconds + (c + d + 2) * n * add + 3 * n * add,
              to_clique.bytes_sent + to_neighbours.bytes_sent};
    }
    case ExchangeMode::gradient_tracking: {
      // A D-PSGD round on the model and the tracker together (gossip/algorithms/gradient_tracking_sync.h).
      const int d = gossip_degree(work, p);
      Cost c = neighbour_push(d, 2 * bytes, wire);
      c.seconds += (d + 1) * 2 * n * add + 3 * n * add;
      return c;
    }
    case ExchangeMode::async_gossip: {
      Cost c = pairwise_exchange(bytes, wire);
      c.seconds += 2 * n * add;
      return c;
    }
    case ExchangeMode::none: break;
  }
  return {};
}

// Whose vectors a peer waits for in synchronous gossip round r.
InNeighbours in_neighbours(const Workload& work, int p) {
  if (work.topology == "one-peer-exponential")
    return [p](int rank, std::uint64_t r) { return std::vector<int>{gossip::one_peer_exponential_in(p, rank, r)}; };
  const gossip::Topology t = gossip::topology_by_name(work.topology, p, work.topology_options);
  return [t](int rank, std::uint64_t) { return t.neighbors(rank); };
}

std::vector<std::vector<int>> neighbour_lists(const Workload& work, int p) {
  const InNeighbours in = in_neighbours(work, p);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) out[static_cast<std::size_t>(i)] = in(i, 0);
  return out;
}

// A round of the config at cluster size c.peers: the event model of its synchronization.
double round_seconds(const Workload& work, const RoundModel& model) {
  if (model.peers < 2) return model.steps_per_round * model.step_seconds * model.stragglers.mean() + model.round_overhead_seconds;
  switch (work.mode) {
    case ExchangeMode::gossip:
    case ExchangeMode::push_sum:
    case ExchangeMode::exact_diffusion:
    case ExchangeMode::clique_averaging:  // its clique's members are among the neighbours it waits for
    case ExchangeMode::gradient_tracking: return neighbour_round_seconds(model, in_neighbours(work, model.peers));
    case ExchangeMode::async_gossip: {
      RoundModel m = model;  // one event per round of `period` steps
      m.step_seconds *= m.steps_per_round, m.steps_per_round = 1;
      return staleness_step_seconds(m, neighbour_lists(work, model.peers),
                                    std::max<std::uint64_t>(1, work.max_staleness / std::max(1, model.steps_per_round)));
    }
    default: return barrier_round_seconds(model);
  }
}

// Rate of one peer alone: no exchange, orders of up to 64 steps.
double single_peer_rate(const Workload& work, const Measured& m, const Cluster& c, int cores) {
  Cluster one = c;
  one.peers = 1;
  const double share = std::max(1.0, static_cast<double>(work.learners) * work.kernel_threads / cores);
  const double step = m.step_seconds * share * c.stragglers.mean() + 2 * m.handoff_seconds / kMaxStepsPerOrder;
  return work.learners * work.batch / step;
}

// Heartbeats one peer sends a second: one per watched peer each heartbeat period.
double control_rate(const Workload& work, int peers) {
  std::vector<gossip::PeerId> ring(static_cast<std::size_t>(peers));
  std::iota(ring.begin(), ring.end(), 0u);
  return static_cast<double>(gossip::watch_overlay(ring, 0).size()) / std::max(1e-3, work.heartbeat_seconds);
}

// The fraction of a host's cores its peers' control messages take (sent and received).
double control_fraction(const Workload& work, const Measured& m, int peers, int on_host, int cores) {
  const double f = on_host * control_rate(work, peers) * m.loopback.alpha_seconds / std::max(1, cores);
  return std::min(f, 0.5);
}

}  // namespace

int peers_per_host(const Cluster& c) {
  const int hosts = c.hosts > 0 ? c.hosts : (c.network.loopback ? 1 : c.peers);
  return (c.peers + hosts - 1) / hosts;
}

int cores_per_host(const Workload& work, const Cluster& c, int this_machine_cores) {
  if (c.cores_per_host > 0) return c.cores_per_host;
  if (c.network.loopback) return std::max(1, this_machine_cores);
  return work.learners * work.kernel_threads + 2;  // the learners, the node's thread and the I/O thread
}

bool host_is_this_machine(const Workload& work, const Cluster& c, int this_machine_cores) {
  return peers_per_host(c) >= c.peers && cores_per_host(work, c, this_machine_cores) == this_machine_cores;
}

Prediction predict(const Workload& work, const Measured& m, const Cluster& c, int this_machine_cores) {
  if (c.peers < 1 || c.peers > kMaxPeers) throw SpecError("--peers: " + std::to_string(c.peers) + " is outside 1..1024");
  const int cores = cores_per_host(work, c, this_machine_cores), q = host_peers(c);
  const int period = std::max(1, work.period);
  const double threads = static_cast<double>(q) * work.learners * work.kernel_threads;
  const double share = std::max(1.0, threads / cores);
  const double step = threads > 1 && m.shared_step_seconds > 0 ? m.shared_step_seconds : m.step_seconds;
  const Wire wire = wire_for(m, c, cores);
  // The exchange runs on one thread per peer (the node's): its CPU work is shared once the
  // host's peers outnumber its cores.
  const double exchange_share = std::max(1.0, static_cast<double>(q) / cores);
  Cost exchange = exchange_cost(work, m, c.peers, wire, exchange_share);
  const Cost latency_only = exchange_cost(work, m, c.peers, Wire{wire.alpha, 0.0}, exchange_share);
  // The node hands each order to its learners and takes their reports back: two thread
  // wake-ups per order, which on a host shared by several peers wait like any message
  // there, for the context switches the ring probe measured among that many peers.
  const double handoff = q > 1 ? std::max(m.handoff_seconds, crowded_latency(m, q)) : m.handoff_seconds;

  const double control = c.peers > 1 ? control_fraction(work, m, c.peers, q, cores) : 0.0;
  RoundModel model;
  model.peers = c.peers;
  model.steps_per_round = period;
  model.step_seconds = step * share / (1.0 - control);
  model.round_overhead_seconds = 2 * handoff * std::ceil(static_cast<double>(period) / kMaxStepsPerOrder);
  model.stragglers = c.stragglers;
  const double compute = period * model.step_seconds * c.stragglers.mean() + model.round_overhead_seconds;
  // A token-bucket link lets what it saved up during the round's compute leave at once:
  // those bytes cost only the CPU's time per byte.
  if (!c.network.loopback) {
    exchange.seconds -= c.network.link.bucket_bytes(exchange.bytes_sent, compute) *
                        (wire.seconds_per_byte - wire.cpu_seconds_per_byte);
  }
  // Peers measured training together on this machine: over loopback, what their round took
  // beyond the modelled compute is the exchange; over a slower link they go no faster.
  const auto host_round = m.host_round_seconds.find(c.peers);
  if (host_round != m.host_round_seconds.end() && host_is_this_machine(work, c, this_machine_cores)) {
    const double measured = std::max(0.0, host_round->second - compute);
    exchange.seconds = c.network.loopback ? measured : std::max(exchange.seconds, measured);
  }
  model.exchange_seconds = exchange.seconds;
  model.seed = c.seed;

  Prediction out;
  out.peers = c.peers;
  out.round_seconds = c.peers < 2 ? period * (step * share * c.stragglers.mean() + 2 * m.handoff_seconds / kMaxStepsPerOrder)
                                  : round_seconds(work, model);
  const double per_round = static_cast<double>(c.peers) * work.learners * work.batch * period;
  out.samples_per_second = per_round / out.round_seconds;
  out.epoch_seconds = work.epoch_samples / out.samples_per_second;
  const double one = single_peer_rate(work, m, c, cores);
  out.speedup = out.samples_per_second / one;
  out.efficiency = out.speedup / c.peers;
  out.bytes_per_peer_per_round = exchange.bytes_sent;
  out.compute_seconds = c.peers < 2 ? out.round_seconds : compute;
  out.exchange_seconds = exchange.seconds;
  out.wait_seconds = std::max(0.0, out.round_seconds - out.compute_seconds - out.exchange_seconds);
  out.comm_bound_speedup = exchange.seconds > 0 ? per_round / exchange.seconds / one : 0.0;
  out.control_messages_per_second = c.peers > 1 ? control_rate(work, c.peers) : 0.0;
  out.control_seconds = c.peers > 1 ? period * model.step_seconds * control : 0.0;
  const double bandwidth = exchange.seconds - latency_only.seconds;
  if (out.wait_seconds > std::max(out.compute_seconds, out.exchange_seconds)) out.bound = "stragglers";
  else if (out.compute_seconds >= out.exchange_seconds) out.bound = "compute";
  else out.bound = bandwidth >= latency_only.seconds ? "network" : "latency";
  return out;
}

}  // namespace starling::simulator
