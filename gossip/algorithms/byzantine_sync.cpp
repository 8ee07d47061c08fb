// An attacking peer's gossip round (gossip/algorithms/byzantine_sync.h).
#include "gossip/algorithms/byzantine_sync.h"

namespace starling::gossip {

ByzantineSync::ByzantineSync(const SyncSetup& s)
    : NeighbourSync(s),
      crafter_(attack_of(s.spec.peers, s.members[s.rank]), s.spec.seed * 1000003 + s.members[s.rank] + s.first_round),
      previous_(s.model.begin(), s.model.end()) {
  for (PeerId id : s.members) attacker_.push_back(attack_of(s.spec.peers, id).on());
}

void ByzantineSync::round(double) {
  const MixingPlan plan = gossip_.plan();
  std::vector<int> honest_in;
  for (const auto& from : plan.receive_from)
    if (!attacker_[from.first]) honest_in.push_back(from.first);
  auto received = gossip_.receive_from(honest_in, model_.size());
  for (int r : plan.send_to)
    if (!attacker_[r]) gossip_.send_to(r, crafter_.craft(r, received, model_, previous_));
  // Its own model: the plain mean of itself and the honest vectors it saw.
  for (std::size_t i = 0; i < model_.size(); ++i) {
    float sum = model_[i];
    for (const auto& [rank, v] : received) sum += v[i];
    model_[i] = sum / static_cast<float>(received.size() + 1);
  }
  previous_.assign(model_.begin(), model_.end());
  crafter_.remember(received);
  gossip_.end_round();
}

}  // namespace starling::gossip
