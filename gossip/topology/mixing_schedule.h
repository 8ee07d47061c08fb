#pragma once
// What one peer does in one gossip round: whom it sends its vector to, whose vectors it
// mixes in and with what weights. A schedule maps a round number to that plan, so static
// topologies (Metropolis–Hastings weights) and time-varying ones (SGP's rotating one-peer
// exponential graph) drive the same averaging step. Ranks index Topology vertices.
#include <cstdint>
#include <string>
#include <functional>
#include <utility>
#include <vector>

#include "gossip/topology/topology.h"

namespace starling::gossip {

struct MixingPlan {
  double self_weight = 1.0;
  std::vector<int> send_to;                        // ranks
  std::vector<std::pair<int, double>> receive_from;  // rank, weight; sorted by rank
};

using MixingSchedule = std::function<MixingPlan(std::uint64_t round)>;

/// Every round: the row of metropolis_weights(topology) for rank; sends to all neighbours.
MixingSchedule metropolis_schedule(const Topology& topology, int rank);

/// The schedule of rank on the topology a config names (topology_by_name).
MixingSchedule schedule_by_name(const std::string& topology, int p, int rank, const TopologyOptions& options);

/// SGP one-peer exponential graph: send to one out-neighbour, rotating through 2^k hops;
/// x ← (x + x_in)/2, doubly stochastic since each round's graph is a permutation.
MixingSchedule one_peer_exponential_schedule(int p, int rank);

/// Out-neighbours of a rank in a round of a directed time-varying graph over p ranks.
using OutNeighbours = std::function<std::vector<int>(int rank, std::uint64_t round)>;

/// Push-sum's column-stochastic plans on a directed graph: rank keeps 1/(1 + out-degree)
/// and pushes as much to each out-neighbour; it receives from every rank that names it,
/// with that rank's share. Row sums differ where in-degrees do (push_sum_sync.h). `out`
/// must give every rank's list the same way on every peer; self loops are ignored. A rank
/// that hears from no one in a round does not wait in it and may run ahead of the others
/// past GossipOptions::max_rounds_ahead: give every rank an in-neighbour every round.
MixingSchedule push_schedule(int p, int rank, OutNeighbours out);

}  // namespace starling::gossip
