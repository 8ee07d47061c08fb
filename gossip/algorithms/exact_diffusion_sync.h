#pragma once
// Mode exact-diffusion: Exact Diffusion (Yuan, Ying, Zhao & Sayed 2019; D² of Tang et al.
// 2018 is the same recursion) in the form for peers that take local optimizer steps between
// exchanges. Like gradient tracking it is exact on heterogeneous data — with a constant step
// it reaches the global optimum — but it sends one model length per round, not two.
//
// Each peer keeps x̃_i, the model it returned from the last round (where its local steps
// began), and ψ̃_i, the model its local steps reached before that round. The model handed
// to round k is ψ_i = x̃_i − η g_i (its local steps' result). Round k, with W̄ = (I + W)/2
// and W the Metropolis–Hastings matrix of the topology over the view:
//
//     φ_i = ψ_i + x̃_i − ψ̃_i      (adapt, then correct by the last round's local change)
//     x_i ← Σ_j W̄_ij φ_j          (combine)
//     x̃_i ← x_i,  ψ̃_i ← ψ_i
//
// W must be symmetric, so the time-varying one-peer exponential graph is refused at config
// time. A fresh start (a new view, the job's start, a resume without a fitting state) takes
// ψ̃_i = x̃_i, so φ_i = ψ_i and the first round is a plain D-PSGD round with W̄: every member
// of the view starts afresh together and nothing of a departed member needs undoing.
// state() is x̃ and ψ̃ (two model lengths), which a checkpoint keeps. No codec: the
// correction term must be exact.
#include <vector>

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {

class ExactDiffusionSync final : public NeighbourSync {
 public:
  explicit ExactDiffusionSync(const SyncSetup& setup);
  /// x̃ then ψ̃ after a round; empty while fresh.
  std::vector<float> state() const override { return kept_.values(); }
  bool restore(const std::vector<float>& values) override { return kept_.restore(values); }

 private:
  void round(double) override;

  PairState kept_;
  std::vector<float>& returned_ = kept_.first;  // x̃
  std::vector<float>& reached_ = kept_.second;  // ψ̃
  bool& started_ = kept_.started;
};

/// The schedule's plans with W̄ = (I + W)/2: half of every weight, plus a half on oneself.
MixingSchedule lazy_schedule(MixingSchedule schedule);

}  // namespace starling::gossip
