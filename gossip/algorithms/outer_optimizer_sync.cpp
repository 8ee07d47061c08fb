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

std::vector<float> OuterOptimizerSync::state() const {
  std::vector<float> values = kept_.values();
  if (!compressed_ || !started_) return values;
  const std::vector<float> compression = compressed_->state();
  values.insert(values.end(), compression.begin(), compression.end());
  return values;
}

bool OuterOptimizerSync::restore(const std::vector<float>& values) {
  const std::size_t n = model_.size();
  if (!compressed_) return kept_.restore(values);
  // x₀, u, then the compressed all-reduce's state; its common model is x₀.
  if (values.size() < 2 * n ||
      !compressed_->resume({values.data(), n}, {values.data() + 2 * n, values.size() - 2 * n}))
    return false;
  return kept_.restore(std::vector<float>(values.begin(), values.begin() + static_cast<long>(2 * n)));
}

std::vector<protocols::Span<float>> OuterOptimizerSync::shared_state() {
  if (!started_) return {};
  return {start_, velocity_};
}

// Δ = x₀ − x̄, u ← βu + Δ, then x₀ ← x̄ + c with c = Δ − α(Δ + βu) (Nesterov) or Δ − αu.
void OuterOptimizerSync::step() {
  const std::size_t n = model_.size();
  float* x = model_.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float change = start_[i] - x[i];
    const float correction = change - outer_update(change, velocity_[i], lr_, momentum_, nesterov_);
    // x̄ + 0 would turn a −0 of x̄ into +0: a zero correction keeps x̄'s bits.
    if (correction != 0.0f) x[i] += correction;
    start_[i] = x[i];
  }
}

}  // namespace starling::gossip
