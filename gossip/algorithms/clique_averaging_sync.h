#pragma once
// Mode clique-averaging: D-PSGD on D-Cliques with Clique Averaging and its momentum (Bellet,
// Kermarrec & Lavoie, SRDS 2022, Algorithm 2 and §4.2), in the form for peers that take
// local optimizer steps between exchanges. Each peer's step is the mean of its clique's
// gradients, unbiased because a clique holds every class; its model is still mixed with the
// Metropolis–Hastings weights of the whole D-Cliques graph, inter-clique edges included.
//
// Each peer keeps x̃, the model the last round returned (where its local steps began), and
// a velocity v in model units. The local optimizer is plain SGD (its momentum moved here),
// so the model handed to a round is x = x̃ − d with d = η·g, its own step. Round, with C the
// peer's clique (itself included) and W the Metropolis–Hastings matrix of the graph:
//
//     d   = x̃ − x                          the local change
//     d̄   = (1/|C|) Σ_{j∈C} d_j             one round among the clique
//     v   ← μ v + d̄                          momentum on the clique's mean, not on d
//     x   ← x̃ − (nesterov ? d̄ + μ v : v)
//     x   ← Σ_j W_ij x_j                    one round over every edge
//     x̃   ← x
//
// which for a constant η is the paper's g = mean_C ∇F(θ_j), v ← μ v + g, θ ← W (θ − η v)
// (PyTorch's momentum; with a schedule, v carries the η of each step it took). Two gossip
// rounds a round: the change to the clique, then the model to every neighbour, so a peer
// sends (|C| − 1 + degree) models where D-PSGD sends degree. No codec: the mean must be exact.
//
// A fresh start (the job's start, a new view, a resume whose view or round differs from the
// checkpoint's) knows no x̃: its clique round averages the models themselves, which is the
// clique-averaged step when the clique's members began from one model, and v starts at 0.
// state() is x̃ and v (two model lengths), which a checkpoint keeps.
#include <vector>

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {

class CliqueAveragingSync final : public NeighbourSync {
 public:
  /// On the spec's D-Cliques over the view; μ and Nesterov from spec.clique_momentum and
  /// clique_nesterov. InvalidArgument for a momentum outside [0, 1).
  explicit CliqueAveragingSync(const SyncSetup& setup);
  /// x̃ then v; empty while fresh.
  std::vector<float> state() const override { return kept_.values(); }
  bool restore(const std::vector<float>& values) override { return kept_.restore(values); }

 private:
  void round(double) override;

  float momentum_;
  bool nesterov_;
  PairState kept_;
  std::vector<float>& start_ = kept_.first;      // x̃
  std::vector<float>& velocity_ = kept_.second;  // v
  bool& started_ = kept_.started;
  std::vector<float> change_;  // d, then d̄
};

/// The rounds of a clique-averaging round over the view, alternating from setup.first_round:
/// the clique's mean (uniform weights over the clique), then Metropolis–Hastings mixing
/// over the D-Cliques graph.
MixingSchedule clique_averaging_schedule(const SyncSetup& setup);

}  // namespace starling::gossip
