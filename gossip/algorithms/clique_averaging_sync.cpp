// D-PSGD with Clique Averaging on D-Cliques (gossip/algorithms/clique_averaging_sync.h).
#include "gossip/algorithms/clique_averaging_sync.h"

#include <algorithm>

#include "gossip/algorithms/view_topology.h"
#include "gossip/topology/d_cliques.h"
#include "gossip/transport/error.h"

namespace starling::gossip {
namespace {

// Rank's clique as a plan: every member, itself included, weighs 1/|C|.
MixingPlan clique_plan(const std::vector<std::vector<int>>& cliques, int rank) {
  MixingPlan plan;
  for (const auto& clique : cliques) {
    if (std::find(clique.begin(), clique.end(), rank) == clique.end()) continue;
    const double weight = 1.0 / static_cast<double>(clique.size());
    plan.self_weight = weight;
    for (int j : clique)
      if (j != rank) plan.send_to.push_back(j), plan.receive_from.emplace_back(j, weight);
  }
  return plan;
}

}  // namespace

MixingSchedule clique_averaging_schedule(const SyncSetup& s) {
  const int p = static_cast<int>(s.members.size());
  const DCliques d = build_d_cliques(p, view_topology_options(s.spec, s.members));
  const MixingPlan clique = clique_plan(d.cliques, s.rank);
  const MixingPlan edges = metropolis_schedule(d.graph, s.rank)(0);
  return [first = s.first_round, clique, edges](std::uint64_t round) { return (round - first) % 2 == 0 ? clique : edges; };
}

CliqueAveragingSync::CliqueAveragingSync(const SyncSetup& s)
    : NeighbourSync(s, clique_averaging_schedule(s)),
      momentum_(static_cast<float>(s.spec.clique_momentum)),
      nesterov_(s.spec.clique_nesterov),
      kept_(s.model.size()),
      change_(s.model.size()) {
  if (!(s.spec.clique_momentum >= 0.0 && s.spec.clique_momentum < 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "clique averaging's momentum must lie in [0, 1)");
}

void CliqueAveragingSync::round(double) {
  const std::size_t n = model_.size();
  float* x = model_.data();
  if (started_) {
    // 1. d = x̃ − x, then d̄ over the clique.
    for (std::size_t i = 0; i < n; ++i) change_[i] = start_[i] - x[i];
    gossip_.run(protocols::Span<float>{change_.data(), n});
    // 2. v ← μ v + d̄;  x ← x̃ − (d̄ + μ v or v).
    for (std::size_t i = 0; i < n; ++i) {
      velocity_[i] = momentum_ * velocity_[i] + change_[i];
      x[i] = start_[i] - (nesterov_ ? change_[i] + momentum_ * velocity_[i] : velocity_[i]);
    }
  } else {
    gossip_.run(model_);  // fresh: the clique's mean model
    std::fill(velocity_.begin(), velocity_.end(), 0.0f);
  }
  // 3. x ← Σ_j W_ij x_j over every edge;  x̃ ← x.
  gossip_.run(model_);
  std::copy(x, x + n, start_.begin());
  started_ = true;
}

}  // namespace starling::gossip
