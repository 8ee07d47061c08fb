// SlowMo / DiLoCo's outer step on the all-reduced model (gossip/algorithms/outer_optimizer_sync.h).
#include "gossip/algorithms/outer_optimizer_sync.h"

#include <algorithm>

#include "gossip/transport/error.h"

namespace starling::gossip {

OuterOptimizerSync::OuterOptimizerSync(const SyncSetup& s)
    : model_(s.model),
      lr_(static_cast<float>(s.spec.outer_lr)),
      momentum_(static_cast<float>(s.spec.outer_momentum)),
      nesterov_(s.spec.outer_nesterov),
      kept_(s.model.size()) {
  if (!(s.spec.outer_lr > 0.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "the outer learning rate must be positive");
  if (!(s.spec.outer_momentum >= 0.0 && s.spec.outer_momentum < 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "the outer momentum must lie in [0, 1)");
  if (s.spec.codec == "none")
    exact_ = std::make_unique<AllreduceSync>(s);
  else
    compressed_ = std::make_unique<CompressedAllreduce>(s.transport, s.members, s.model, s.spec.codec, s.codec_options,
                                                        round_options<CompressedAllreduceOptions>(s));
}

void OuterOptimizerSync::round(double compute_seconds) {
  // The model is now x̄: the exact mean, or x₀ plus the decoded mean of the compressed changes.
  if (exact_) round_of(*exact_, compute_seconds);
  else compressed_->run();
  if (started_) {
    step();
  } else {
    // Fresh: this round was a plain all-reduce, from which every member starts together.
    std::copy(model_.begin(), model_.end(), start_.begin());
    std::fill(velocity_.begin(), velocity_.end(), 0.0f);
    started_ = true;
  }
  if (compressed_) compressed_->rebase();  // the next pseudo-gradients are taken from x₀
}

std::map<std::string, std::uint64_t> OuterOptimizerSync::drops() const {
  return exact_ ? exact_->drops() : compressed_->drops();
}

namespace {

// A count carried in a float state: four 16-bit pieces, each exact in a float.
constexpr int kFloatsPerCount = 4;

void append_count(std::vector<float>& values, std::uint64_t count) {
  for (int piece = 0; piece < kFloatsPerCount; ++piece) values.push_back(static_cast<float>((count >> (16 * piece)) & 0xffff));
}

std::uint64_t read_count(const float* values) {
  std::uint64_t count = 0;
  for (int piece = 0; piece < kFloatsPerCount; ++piece)
    count |= static_cast<std::uint64_t>(values[piece]) << (16 * piece);
  return count;
}

}  // namespace

std::vector<float> OuterOptimizerSync::state() const {
  std::vector<float> values = kept_.values();
  if (!compressed_ || !started_) return values;
  values.insert(values.end(), compressed_->residual().begin(), compressed_->residual().end());
  for (std::uint64_t draws : compressed_->draws()) append_count(values, draws);
  return values;
}

bool OuterOptimizerSync::restore(const std::vector<float>& values) {
  const std::size_t n = model_.size();
  if (!compressed_) return kept_.restore(values);
  std::vector<std::uint64_t> draws = compressed_->draws();
  const std::size_t with_draws = 3 * n + kFloatsPerCount * draws.size();
  if (values.size() != 3 * n && values.size() != with_draws) return false;
  for (std::size_t i = 3 * n; i < values.size(); ++i)
    if (!(values[i] >= 0.0f && values[i] <= 65535.0f && values[i] == static_cast<float>(static_cast<int>(values[i]))))
      return false;  // not a 16-bit piece: not this algorithm's state
  const std::vector<float> pair(values.begin(), values.begin() + static_cast<long>(2 * n));
  kept_.restore(pair);
  if (values.size() == with_draws)
    for (std::size_t s = 0; s < draws.size(); ++s) draws[s] = read_count(values.data() + 3 * n + kFloatsPerCount * s);
  return compressed_->resume(start_, {values.data() + 2 * n, n}) && (values.size() == 3 * n || compressed_->set_draws(draws));
}

// Δ = x₀ − x̄, u ← βu + Δ, then x₀ ← x̄ + c with c = Δ − α(Δ + βu) (Nesterov) or Δ − αu.
void OuterOptimizerSync::step() {
  const std::size_t n = model_.size();
  float* x = model_.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float change = start_[i] - x[i];
    velocity_[i] = momentum_ * velocity_[i] + change;
    const float correction = change - lr_ * (nesterov_ ? change + momentum_ * velocity_[i] : velocity_[i]);
    // x̄ + 0 would turn a −0 of x̄ into +0: a zero correction keeps x̄'s bits.
    if (correction != 0.0f) x[i] += correction;
    start_[i] = x[i];
  }
}

}  // namespace starling::gossip
