// NoLoCo's outer step with one random partner (gossip/algorithms/noloco_sync.h).
#include "gossip/algorithms/noloco_sync.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "gossip/transport/error.h"

namespace starling::gossip {

MixingSchedule random_pairs_schedule(int p, int rank, std::uint64_t seed) {
  return [p, rank, seed](std::uint64_t round) {
    MixingPlan plan;
    if (p < 2) return plan;
    std::vector<int> order(static_cast<std::size_t>(p));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ull * (round + 1)));
    for (int i = p - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<int>(0, i)(rng)]);
    const int at = static_cast<int>(std::find(order.begin(), order.end(), rank) - order.begin());
    // Groups are consecutive pairs of the order; an odd last one joins the pair before it.
    int first = at - at % 2;
    int size = 2;
    if (p % 2 == 1 && first >= p - 3) first = p - 3, size = 3;
    plan.self_weight = 1.0 / size;
    for (int k = first; k < first + size; ++k)
      if (order[k] != rank) plan.send_to.push_back(order[k]), plan.receive_from.push_back({order[k], 1.0 / size});
    std::sort(plan.receive_from.begin(), plan.receive_from.end());
    return plan;
  };
}

namespace {

// On a fixed graph a neighbour is at most a round apart. With a new partner every round, the
// peers that have not met a slow one run on, so a peer can be several rounds ahead of its
// next partner, whose vector must then wait in the buffer rather than be dropped as too far
// ahead (the round would time out). Only that round's partner's vector is filed, so the
// buffer holds at most one vector a round.
GossipOptions pair_options(const SyncSetup& s) {
  auto options = round_options<GossipOptions>(s);
  options.max_rounds_ahead = std::max<std::uint64_t>(options.max_rounds_ahead, 2 * s.members.size());
  return options;
}

}  // namespace

NolocoSync::NolocoSync(const SyncSetup& s)
    : model_(s.model),
      gossip_(s.transport, s.members, random_pairs_schedule(static_cast<int>(s.members.size()), s.rank, s.spec.seed),
              pair_options(s)),
      lr_(static_cast<float>(s.spec.outer_lr)),
      momentum_(static_cast<float>(s.spec.outer_momentum)),
      gamma_(static_cast<float>(s.spec.gamma)),
      pair_(2 * s.model.size()),
      kept_(s.model.size()) {
  if (!(s.spec.outer_lr > 0.0)) STARLING_GOSSIP_THROW(InvalidArgument, "the outer learning rate must be positive");
  if (!(s.spec.outer_momentum >= 0.0 && s.spec.outer_momentum < 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "the outer momentum must lie in [0, 1)");
  if (!(s.spec.gamma >= 0.0 && s.spec.gamma <= 1.0)) STARLING_GOSSIP_THROW(InvalidArgument, "gamma must lie in [0, 1]");
}

void NolocoSync::round(double) {
  const std::size_t n = model_.size();
  float* theta = model_.data();
  if (!started_) {
    std::copy(theta, theta + n, outer_.begin());
    std::fill(velocity_.begin(), velocity_.end(), 0.0f);
    started_ = true;
    return;
  }
  std::copy(outer_.begin(), outer_.end(), pair_.begin());
  std::copy(theta, theta + n, pair_.begin() + static_cast<long>(n));
  gossip_.run(pair_);
  const float* outer_mean = pair_.data();
  const float* theta_mean = pair_.data() + n;
  for (std::size_t i = 0; i < n; ++i) {
    const float pseudo_gradient = outer_mean[i] - theta_mean[i];
    velocity_[i] = momentum_ * velocity_[i] - lr_ * pseudo_gradient - gamma_ * (outer_[i] - outer_mean[i]);
    outer_[i] += velocity_[i];
    theta[i] = outer_[i];
  }
}

}  // namespace starling::gossip
