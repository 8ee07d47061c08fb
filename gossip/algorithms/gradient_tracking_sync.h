#pragma once
// Mode gradient-tracking: DIGing / DSGT (Nedić et al. 2017; Pu & Nedić 2021) in the form
// for peers that take local optimizer steps between exchanges. Exact on heterogeneous data:
// with a constant step it reaches the global optimum, where D-PSGD stays a heterogeneity-
// dependent distance away.
//
// Each peer keeps x̃_i, the model it returned from the last round (where its local steps
// began), a tracker y_i of the peers' mean local change, and d̃_i, its last local change.
// The model handed to round k is x_i = x̃_i − d_i: d_i, the change its local steps made, is
// taken for η·g_i (one SGD step: exactly η∇f_i(x̃_i)). Round k, with W the Metropolis–
// Hastings matrix of the topology over the view (doubly stochastic):
//
//     d_i  = x̃_i − x_i
//     y_i ← Σ_j W_ij y_j + d_i − d̃_i
//     x_i ← Σ_j W_ij x̃_j − y_i
//     x̃_i ← x_i,  d̃_i ← d_i
//
// which is DIGing's x⁺ = W x − η y, y⁺ = W y + η g(x⁺) − η g(x) with the tracker scaled
// by η. W being doubly stochastic keeps mean(y) = mean(d̃) after every round, so the mean
// model moves by the mean local change, as all-reduce's would. x̃ and y travel together as
// one vector of twice the model's length in one gossip round (gossip_average.h): the
// exchange sends twice D-PSGD's bytes. No codec: the tracker's sum must be exact.
//
// A fresh tracker (a new view, the job's start, a resume without a fitting state) begins
// with one plain D-PSGD round, x_i ← Σ_j W_ij x_j, and sets y_i = 0, d̃_i = 0, x̃_i = x_i:
// every member of the view starts afresh together, so mean(y) = mean(d̃) = 0 holds from the
// start, and from there on this is DIGing started at the mixed model. Nothing of a
// departed member's tracker needs to be undone. state() is x̃, y and d̃ (three model
// lengths), which a checkpoint keeps.
#include <vector>

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {

class GradientTrackingSync final : public NeighbourSync {
 public:
  explicit GradientTrackingSync(const SyncSetup& setup);
  /// x̃, y, d̃ after a tracking round; empty while the tracker is fresh.
  std::vector<float> state() const override;
  bool restore(const std::vector<float>& values) override;

 private:
  void round(double) override;
  void start_tracking();
  void track();

  std::vector<float> mixed_;       // x̃ then y: what a round sends and mixes
  std::vector<float> change_;      // d̃
  std::vector<float> new_change_;  // d of the round in progress
  bool tracking_ = false;
};

}  // namespace starling::gossip
