#pragma once
// Modes allreduce and local-sgd with an outer optimizer (exchange.outer_lr α ≠ 1 or
// exchange.outer_momentum β > 0): SlowMo (Wang et al. 2020) / DiLoCo (Douillard et al.
// 2023). The ring all-reduce (allreduce_sync.h) gives the members' mean x̄; the change since
// the last synchronisation is then taken for a gradient and stepped with momentum:
//
//     Δ  = x₀ − x̄                  x₀: the model the last round returned
//     u ← β u + Δ
//     x₀ ← x₀ − α (Δ + β u)         Nesterov (exchange.outer_nesterov, the default)
//     x₀ ← x₀ − α u                 heavy ball
//     model ← x₀
//
// x₀ and u are the same on every member (each member steps the same x̄ from the same
// state), so every member ends the round with the identical model, as under plain
// all-reduce. The step is computed as a correction to x̄, x₀ ← x̄ + (Δ − α (Δ + β u)), and a
// zero correction leaves x̄'s bits as they are: with α = 1 and β = 0 every round returns
// x̄ bit for bit.
//
// A fresh optimizer (the job's start, every new membership view, a resume whose view or
// round differs from the checkpoint's) knows no x₀: its first round is a plain all-reduce
// that sets x₀ = x̄ and u = 0 on every member of the view at once, so they go on in step.
// state() is x₀ then u (two model lengths), which a checkpoint keeps.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gossip/algorithms/allreduce_sync.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

class OuterOptimizerSync final : public SyncAlgorithm {
 public:
  /// Takes α, β and Nesterov from the spec; InvalidArgument for α ≤ 0 or β outside [0, 1).
  explicit OuterOptimizerSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override { return allreduce_.drops(); }
  /// x₀ then u; empty while the optimizer is fresh.
  std::vector<float> state() const override { return kept_.values(); }
  bool restore(const std::vector<float>& values) override { return kept_.restore(values); }

 private:
  void round(double compute_seconds) override;
  void step();

  protocols::Span<float> model_;
  AllreduceSync allreduce_;
  float lr_;        // α
  float momentum_;  // β
  bool nesterov_;
  PairState kept_;
  std::vector<float>& start_ = kept_.first;  // x₀
  std::vector<float>& velocity_ = kept_.second;  // u
  bool& started_ = kept_.started;
};

}  // namespace starling::gossip
