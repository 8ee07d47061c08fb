#pragma once
// Mode push-sum: Stochastic Gradient Push (Assran et al. 2019), push-sum gossip (Kempe et
// al. 2003) for peers that take local steps between exchanges. Each peer keeps a numerator
// x_i and a push-sum weight w_i; its model is the de-biased z_i = x_i / w_i, which is what
// the local steps see and change. Round k, with the view's schedule (mixing_schedule.h):
//
//     x_i ← x_i + (z_i − x_i / w_i)          the local steps' change goes to the numerator
//     (x_i, w_i) ← a_ii (x_i, w_i) + Σ_j a_ij (x_j, w_j)
//     z_i ← x_i / w_i
//
// where a_ij is the share j pushes to i: j keeps 1/(1 + out-degree) and sends as much to
// each out-neighbour. The matrix A is column-stochastic, so Σ x and Σ w are conserved and
// z_i tends to Σ x / Σ w, the exact average, on directed and time-varying graphs where
// row sums differ and plain averaging (the same sends without w) is biased. On
// exchange.topology = "one-peer-exponential" this is SGP's graph: round k, i keeps half of
// (x, w), pushes half to i + 2^(k mod ⌈log2 n⌉) and adds what i − 2^(k mod ⌈log2 n⌉) pushed.
//
// Note: every topology the config offers is doubly stochastic per round (each one-peer
// exponential round is a permutation, the others have symmetric Metropolis–Hastings
// weights), so there w stays exactly 1 and push-sum computes D-PSGD's mixing; the weight
// makes the difference on schedules with unequal in-degrees (push_schedule()), which the
// tests drive directly.
//
// x and w travel together as one vector of length n + 1 in one gossip round
// (gossip_average.h). No codec: the sums must be conserved exactly. A fresh algorithm (the
// job's start, a new view after a membership change, a resume without a fitting state)
// starts at its first round from w = 1 and x = z, the peer's current de-biased model: the
// new view's members conserve Σ x / Σ w = mean z from there on, and nothing of a departed
// member's mass needs to be undone (it is gone with the old view). state() is x then w
// (n + 1 floats), which a checkpoint keeps.
#include <vector>

#include "gossip/algorithms/dpsgd_sync.h"
#include "gossip/topology/mixing_schedule.h"

namespace starling::gossip {

class PushSumSync final : public NeighbourSync {
 public:
  /// Over the view's schedule (exchange.topology over the members).
  explicit PushSumSync(const SyncSetup& setup);
  /// Over any column-stochastic schedule of the view's ranks (a push_schedule()).
  PushSumSync(const SyncSetup& setup, MixingSchedule schedule);
  /// x then w once started; empty while fresh.
  std::vector<float> state() const override;
  /// False unless n + 1 values with a finite w > 0.
  bool restore(const std::vector<float>& values) override;

 private:
  void round(double) override;

  std::vector<float> mass_;  // x then w: what a round pushes and mixes
  bool started_ = false;
};

}  // namespace starling::gossip
