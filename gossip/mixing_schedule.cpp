// Per-round mixing plans for gossip averaging (gossip/mixing_schedule.h).
#include "gossip/mixing_schedule.h"

namespace starling::gossip {

MixingSchedule metropolis_schedule(const Topology& topology, int rank) {
  const DenseMatrix w = metropolis_weights(topology);
  MixingPlan plan;
  if (rank >= 0 && rank < topology.size()) {
    plan.self_weight = w(rank, rank);
    for (int j : topology.neighbors(rank)) {
      plan.send_to.push_back(j);
      plan.receive_from.emplace_back(j, w(rank, j));
    }
  }
  return [plan](std::uint64_t) { return plan; };
}

MixingSchedule one_peer_exponential_schedule(int p, int rank) {
  return [p, rank](std::uint64_t round) {
    MixingPlan plan;
    const int out = one_peer_exponential_out(p, rank, round);
    if (out < 0) return plan;
    plan.self_weight = 0.5;
    plan.send_to = {out};
    plan.receive_from = {{one_peer_exponential_in(p, rank, round), 0.5}};
    return plan;
  };
}

MixingSchedule schedule_by_name(const std::string& topology, int p, int rank, int random_degree, std::uint64_t seed) {
  if (topology == "one-peer-exponential") return one_peer_exponential_schedule(p, rank);
  return metropolis_schedule(topology_by_name(topology, p, random_degree, seed), rank);
}

}  // namespace starling::gossip
