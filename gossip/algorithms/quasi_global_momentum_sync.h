#pragma once
// Mode gossip with exchange.quasi_global_momentum = μ > 0: D-PSGD with quasi-global
// momentum (Lin et al. 2021, QG-DSGDm), in the form for peers that take local steps between
// exchanges. The local optimizer runs without momentum (optimizer.momentum = 0); the
// momentum is built here from the change of the peer's model across a whole round, gossip
// included, so that it follows the peers' common direction rather than the peer's own
// (non-IID) gradients, which local momentum would amplify.
//
// Each peer keeps x̃, the model the last round returned (where its local steps began), and
// a momentum M in model units (M = η·m̂ for a constant step η). The model handed to a round
// is x, after the local steps. Round, with W the Metropolis–Hastings matrix over the view:
//
//     x ← Σ_j W_ij (x_j − μ M_j)       the heavy-ball step, then the gossip round
//     M ← μ M + (1 − μ) (x̃ − x)
//     x̃ ← x
//
// which is QG-DSGDm's x⁺ = W (x − η (g + μ m̂)), m̂ ← μ m̂ + (1 − μ)(x − x⁺)/η. A fresh
// momentum (the job's start, a new view, a resume whose view or round differs from the
// checkpoint's) is M = 0 with x̃ unknown: that round is a plain D-PSGD round. With μ = 0
// every round is a D-PSGD round, bit for bit. state() is x̃ and M (two model lengths).
#include <vector>

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {

class QuasiGlobalMomentumSync final : public NeighbourSync {
 public:
  /// Takes μ from spec.quasi_global_momentum; InvalidArgument outside [0, 1).
  explicit QuasiGlobalMomentumSync(const SyncSetup& setup);
  /// x̃ then M; empty while the momentum is fresh.
  std::vector<float> state() const override { return kept_.values(); }
  bool restore(const std::vector<float>& values) override { return kept_.restore(values); }

 private:
  void round(double) override;

  float momentum_;
  PairState kept_;
  std::vector<float>& start_ = kept_.first;  // x̃
  std::vector<float>& velocity_ = kept_.second;  // M
  bool& started_ = kept_.started;
};

}  // namespace starling::gossip
