#pragma once
// Modes allreduce and local-sgd with an outer optimizer (exchange.outer_lr α ≠ 1 or
// exchange.outer_momentum β > 0): SlowMo (Wang et al. 2020) / DiLoCo (Douillard et al.
// 2023). An all-reduce gives the members' mean x̄; the change since the last
// synchronisation, the pseudo-gradient, is then stepped with momentum:
//
//     Δ  = x₀ − x̄                  x₀: the model the last round returned
//     u ← β u + Δ
//     x₀ ← x₀ − α (Δ + β u)         Nesterov (exchange.outer_nesterov, the default)
//     x₀ ← x₀ − α u                 heavy ball
//     model ← x₀
//
// Without a codec x̄ is the ring all-reduce's exact mean (allreduce_sync.h). With one, the
// members' pseudo-gradients travel compressed (compressed_allreduce.h, from the common model
// x₀): int8 or 4-bit through a quantizing ring (INTELLECT-1, Streaming DiLoCo), or top-k
// with 2-bit values (SparseLoCo), each member keeping what its compression left out for the
// next round (error feedback); x̄ is then x₀ plus the decoded mean, the same bits on every
// member, and the outer step runs on it.
//
// x₀ and u are the same on every member (each member steps the same x̄ from the same
// state), so every member ends the round with the identical model, as under plain
// all-reduce. The step is computed as a correction to x̄, x₀ ← x̄ + (Δ − α (Δ + β u)), and a
// zero correction leaves x̄'s bits as they are: with α = 1 and β = 0 every round returns
// x̄ bit for bit.
//
// A fresh optimizer (the job's start, every new membership view, a resume whose view or
// round differs from the checkpoint's) knows no x₀: its first round is a plain fp32
// all-reduce that sets x₀ = x̄ and u = 0 on every member of the view at once, so they go on
// in step. state() is x₀ then u (two model lengths), and with a codec the compressed
// all-reduce's state after them (CompressedAllreduce::state: this member's error feedback and
// where its codec streams' draws stand), which a checkpoint keeps: a resumed run goes on with
// the bits of an uninterrupted one.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gossip/algorithms/allreduce_sync.h"
#include "gossip/algorithms/compressed_allreduce.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

/// One coordinate of the outer step on the pseudo-gradient `change`: u ← β u + Δ, and the
/// step to take off x₀, α (Δ + β u) (Nesterov) or α u. Shared with deferred_outer_sync.h.
inline float outer_update(float change, float& velocity, float lr, float beta, bool nesterov) {
  velocity = beta * velocity + change;
  return lr * (nesterov ? change + beta * velocity : velocity);
}

class OuterOptimizerSync final : public SyncAlgorithm {
 public:
  /// Takes α, β, Nesterov and the codec from the spec; InvalidArgument for α ≤ 0, β
  /// outside [0, 1) or a codec the compressed all-reduce cannot run.
  explicit OuterOptimizerSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override;
  /// x₀, u and, with a codec, the residual; empty while the optimizer is fresh.
  std::vector<float> state() const override;
  bool restore(const std::vector<float>& values) override;
  /// x₀ and u once started (the residual with a codec is this member's own).
  std::vector<protocols::Span<float>> shared_state() override;

 private:
  void round(double compute_seconds) override;
  void step();

  protocols::Span<float> model_;
  std::unique_ptr<AllreduceSync> exact_;             // codec "none"
  std::unique_ptr<CompressedAllreduce> compressed_;  // any other codec
  float lr_;        // α
  float momentum_;  // β
  bool nesterov_;
  PairState kept_;
  std::vector<float>& start_ = kept_.first;  // x₀
  std::vector<float>& velocity_ = kept_.second;  // u
  bool& started_ = kept_.started;
};

}  // namespace starling::gossip
