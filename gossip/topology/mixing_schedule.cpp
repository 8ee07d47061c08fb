// Per-round mixing plans for gossip averaging (gossip/topology/mixing_schedule.h).
#include "gossip/topology/mixing_schedule.h"

#include <algorithm>

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

namespace {

std::vector<int> proper_out(const OutNeighbours& out, int rank, std::uint64_t round) {
  std::vector<int> to = out(rank, round);
  to.erase(std::remove(to.begin(), to.end(), rank), to.end());
  return to;
}

}  // namespace

MixingSchedule push_schedule(int p, int rank, OutNeighbours out) {
  return [p, rank, out = std::move(out)](std::uint64_t round) {
    MixingPlan plan;
    plan.send_to = proper_out(out, rank, round);
    plan.self_weight = 1.0 / (1.0 + static_cast<double>(plan.send_to.size()));
    for (int j = 0; j < p; ++j) {  // ascending: receive_from stays sorted by rank
      if (j == rank) continue;
      const std::vector<int> to = proper_out(out, j, round);
      if (std::find(to.begin(), to.end(), rank) != to.end())
        plan.receive_from.emplace_back(j, 1.0 / (1.0 + static_cast<double>(to.size())));
    }
    return plan;
  };
}

MixingSchedule schedule_by_name(const std::string& topology, int p, int rank, const TopologyOptions& options) {
  if (topology == "one-peer-exponential") return one_peer_exponential_schedule(p, rank);
  return metropolis_schedule(topology_by_name(topology, p, options), rank);
}

}  // namespace starling::gossip
