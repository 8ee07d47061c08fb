#pragma once
// The scaling model: samples/s, time per epoch, speedup and efficiency over one peer, and
// bytes per peer per round, for a config's exchange mode at N peers. It joins what was
// measured on this machine (Measured: a learner's step, the codec, the loopback link and a
// crowded host's latency) with the cluster's shape (Cluster: link, hosts, cores) through the
// closed forms of simulator/collectives.h and, where synchronization decides the pace, the
// discrete-event models of simulator/event_sim.h.
//
// One iteration of a peer: its learners' step (all learners in parallel), then every
// `period` iterations an exchange; the node sends its learners an order per exchange period
// (two thread hand-offs). Per round of `period` iterations:
//   round = period · step · share + 2 · handoff + exchange(p)
// Hosts shared by several peers (all of them on one machine for loopback) pay twice:
//   compute: share = max(1, peers_on_host · learners · kernel_threads / cores), on the step
//            measured with that many replicas stepping at once (at most this machine's cores)
//   control: every peer on the host sends w/h heartbeats a second (w: the peers it watches,
//            at most 2·⌈log2 n⌉; h: the heartbeat period) and receives as many, each costing
//            the host's CPU about the loopback latency α; that fraction f of its cores
//            stretches the compute: step · share / (1 − f)
//   network: every peer on the host moves its bytes through the same CPUs, at the measured
//            CPU cost per byte: g = max(1/β, peers_on_host · cpu_per_byte / min(cores, 2·peers_on_host));
//            and each message waits for the context switches of a crowded host: α is then
//            the measured latency of a ring step among that many peers.
// Where every peer shares one host like this machine (loopback, or namespaces here), the
// peers' compute and exchanges interleave on its cores, which no link model captures: there
// a round of them training together here is measured, and the exchange is what it took
// beyond the modelled compute (over loopback), or at least that (over a slower link).
#include "gossip/peer_exchange.h"
#include "gossip/topology/topology.h"
#include "simulator/network.h"
#include "simulator/probes.h"
#include "simulator/stragglers.h"

#include <cstdint>
#include <map>
#include <string>

namespace starling::simulator {

/// What the config asks for, independent of the machine.
struct Workload {
  std::string model = "mlp";
  double parameters = 0;     // elements of the flat arena
  int batch = 32;            // per learner
  int learners = 1;          // per peer
  int kernel_threads = 1;
  gossip::ExchangeMode mode = gossip::ExchangeMode::allreduce;
  int period = 1;            // iterations between exchanges
  std::string topology = "ring";
  /// What the topology is built from; no label histograms, so D-Cliques' cliques are drawn
  /// by the seed (its degrees, which is what the model needs, are the same).
  gossip::TopologyOptions topology_options;
  std::string codec = "none";
  std::uint64_t max_staleness = 4;
  double epoch_samples = 60000;  // the training set
  double heartbeat_seconds = 0.5;  // exchange.heartbeat_seconds: the control plane's period
};

/// What was measured on this machine (simulator/probes.h).
struct Measured {
  double step_seconds = 0.0;  // one learner step at Workload::batch, alone on this machine
  /// The same with `shared_concurrency` replicas stepping at once (peers sharing a host);
  /// used for every host that runs more than one learner thread. 0: not measured.
  double shared_step_seconds = 0.0;
  int shared_concurrency = 1;
  double handoff_seconds = 0.0;
  double add_seconds_per_element = 0.0;
  CodecRates codec;            // of Workload::codec; unused for "none"
  LoopbackLink loopback;
  /// Ring-step latency by peers on one host (measure_ring_step_seconds), for loopback.
  std::map<int, double> crowded_latency;
  /// Seconds per byte of a ring step among q peers on one host all streaming 1 MiB at once
  /// (the 1 MiB step less the 64-byte one, per byte), for loopback. Empty: not measured, and
  /// one stream's CPU per byte shared among the host's peers stands in.
  std::map<int, double> crowded_seconds_per_byte;
  /// Seconds of a round of q peers training together on this machine (measure_host_round_seconds),
  /// where the cluster is q peers on one host like it (host_is_this_machine): over loopback,
  /// what it takes beyond the modelled compute is the exchange as the crowded host runs it,
  /// in place of the link model's; over a slower link, the least the exchange takes. Empty,
  /// or a q not in it: the link model alone.
  std::map<int, double> host_round_seconds;
};

struct Cluster {
  int peers = 1;
  NetworkSpec network;
  int hosts = 0;           // 0: one per peer, or one for loopback
  int cores_per_host = 0;  // 0: this machine's cores for loopback, else learners · kernel threads
  Stragglers stragglers;
  std::uint64_t seed = 1;
};

struct Prediction {
  int peers = 1;
  double samples_per_second = 0;
  double epoch_seconds = 0;
  double speedup = 1;      // over one peer on the same network and hosts
  double efficiency = 1;   // speedup / peers
  double bytes_per_peer_per_round = 0;
  double round_seconds = 0;     // one exchange period, synchronization included
  double compute_seconds = 0;   // of a round: the steps (shared CPUs included)
  double exchange_seconds = 0;  // of a round: the exchange
  double wait_seconds = 0;      // of a round: waiting for slower peers (stragglers)
  double comm_bound_speedup = 0;  // the speedup if compute were free: only the exchange limits
  /// The control plane (membership.h): heartbeats a peer sends per second, one per watched
  /// peer (watch_overlay.h) every heartbeat period, and the CPU time its host's peers spend
  /// sending and receiving them during a round (part of compute_seconds).
  double control_messages_per_second = 0;
  double control_seconds = 0;
  std::string bound;            // "compute", "network", "latency" or "stragglers"
};

/// Peers on one host and that host's cores, from the cluster's shape and its defaults.
int peers_per_host(const Cluster& cluster);
int cores_per_host(const Workload& work, const Cluster& cluster, int this_machine_cores);

/// Whether every peer of the cluster shares one host with this machine's cores: a round of
/// them training together here (Measured::host_round_seconds) can then be measured.
bool host_is_this_machine(const Workload& work, const Cluster& cluster, int this_machine_cores);

/// Predicts one cluster size; SpecError for peers outside 1..1024.
Prediction predict(const Workload& work, const Measured& measured, const Cluster& cluster, int this_machine_cores);

}  // namespace starling::simulator
