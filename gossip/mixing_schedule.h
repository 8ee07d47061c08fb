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

#include "gossip/topology.h"

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
MixingSchedule schedule_by_name(const std::string& topology, int p, int rank, int random_degree, std::uint64_t seed);

/// SGP one-peer exponential graph: send to one out-neighbour, rotating through 2^k hops;
/// x ← (x + x_in)/2, doubly stochastic since each round's graph is a permutation.
MixingSchedule one_peer_exponential_schedule(int p, int rank);

}  // namespace starling::gossip
