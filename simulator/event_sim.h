#pragma once
// Discrete-event models of the synchronization between peers, where the slowest peer, not
// the mean one, sets the pace. Each peer's step takes step_seconds times a factor drawn from
// the straggler distribution; an exchange takes exchange_seconds (from the closed forms).
//   barrier     all-reduce and local SGD: every round of `steps_per_round` steps ends with
//               an exchange that starts when the slowest peer is done:
//               f(r) = max_i (f(r−1) + c_i(r)) + T
//   neighbours  synchronous gossip: a peer's round ends once it and its in-neighbours of
//               that round have computed: f_i(r) = max_{j ∈ {i} ∪ in_i(r)} (f_j(r−1) + c_j(r)) + T
//   staleness   asynchronous gossip: no barrier; a peer that has done k steps starts
//               the next only while k − min over its neighbours of their steps ≤ s
// Without stragglers every model reduces to its closed form (tests check it). The number of
// rounds simulated is bounded so that 1024 peers stay well under a second.
#include "simulator/stragglers.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace starling::simulator {

struct RoundModel {
  int peers = 1;
  int steps_per_round = 1;
  double step_seconds = 0.0;            // one step before the straggler factor
  double round_overhead_seconds = 0.0;  // per round, outside the steps (the node's orders)
  double exchange_seconds = 0.0;        // one exchange
  Stragglers stragglers;
  std::uint64_t seed = 1;
};

/// Mean seconds per round behind a global barrier.
double barrier_round_seconds(const RoundModel& model);

/// The ranks whose round-r vectors peer `rank` waits for (not itself).
using InNeighbours = std::function<std::vector<int>(int rank, std::uint64_t round)>;

/// Mean seconds per round when each peer waits only for its in-neighbours.
double neighbour_round_seconds(const RoundModel& model, const InNeighbours& in);

/// Mean seconds per step of a peer in asynchronous gossip (steps_per_round is 1 there;
/// exchange_seconds is the pairwise exchange after every step) within staleness bound s.
double staleness_step_seconds(const RoundModel& model, const std::vector<std::vector<int>>& neighbours,
                              std::uint64_t max_staleness);

}  // namespace starling::simulator
