#pragma once
// An attacking peer's round under mode gossip (attack.h): it waits for this round's vectors
// of its honest in-neighbours only (attackers never wait for each other), sends each honest
// out-neighbour the vector crafted for it, then mixes what it received into its own model
// with plain averaging, so that it keeps training near the honest models it attacks. It
// speaks GossipAverage's protocol exactly: to its neighbours it is one more peer.
#include <vector>

#include "gossip/algorithms/attack.h"
#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {

class ByzantineSync final : public NeighbourSync {
 public:
  explicit ByzantineSync(const SyncSetup& setup);

 private:
  void round(double) override;

  AttackCrafter crafter_;
  std::vector<bool> attacker_;      // per member rank
  std::vector<float> previous_;    // the model after the last round (sign-flip)
};

}  // namespace starling::gossip
