#pragma once
// Mode gossip with an outer optimizer (exchange.outer_lr β ≠ 1 or exchange.outer_momentum
// α > 0): NoLoCo (Kolehmainen et al. 2025), DiLoCo's outer step without an all-reduce. Each
// round the view's members fall into random pairs (random_pairs_schedule: a permutation
// drawn from the seed and the round, the same on every member; with an odd count one group
// of three), and each member averages with its partner only:
//
//     φ: the outer model (the model the last round returned), θ: the model now
//     Δ̄ = mean over the pair of (φ_j − θ_j)           the pair's pseudo-gradient
//     φ̄ = mean over the pair of φ_j
//     δ ← α δ − β Δ̄ − γ (φ − φ̄)                      γ = exchange.gamma
//     φ ← φ + δ,  model ← φ
//
// The pair's means come from one D-PSGD round of [φ; θ] over the pair (gossip_average.h,
// two model lengths each way). Averaging in pairs keeps the members' mean of φ and θ, so the
// members' mean of φ moves as DiLoCo's heavy-ball outer step on the all-reduced
// pseudo-gradient would; γ pulls each outer model toward its partner's. With α = 0, β = 1
// and γ = 1 a round is plain pairwise gossip of the models.
//
// A fresh algorithm (the job's start, every new view) takes φ = θ and δ = 0 on every member
// and sends nothing; state() is φ then δ, which a checkpoint keeps.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gossip/algorithms/gossip_average.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

/// Random groups of two (one of three when p is odd) drawn anew every round from (seed,
/// round), the same on every rank: each member sends to its partners and takes the group's
/// mean.
MixingSchedule random_pairs_schedule(int p, int rank, std::uint64_t seed);

class NolocoSync final : public SyncAlgorithm {
 public:
  /// Takes β, α and γ from the spec; InvalidArgument for β ≤ 0, α outside [0, 1) or γ outside [0, 1].
  explicit NolocoSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override { return gossip_.drops(); }
  /// φ then δ; empty while fresh.
  std::vector<float> state() const override { return kept_.values(); }
  bool restore(const std::vector<float>& values) override { return kept_.restore(values); }

 private:
  void round(double compute_seconds) override;

  protocols::Span<float> model_;
  GossipAverage gossip_;
  float lr_;        // β
  float momentum_;  // α
  float gamma_;     // γ
  std::vector<float> pair_;  // [φ; θ], then the pair's means
  PairState kept_;
  std::vector<float>& outer_ = kept_.first;      // φ
  std::vector<float>& velocity_ = kept_.second;  // δ
  bool& started_ = kept_.started;
};

}  // namespace starling::gossip
