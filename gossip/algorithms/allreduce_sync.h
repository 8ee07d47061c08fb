#pragma once
// Modes allreduce and local-sgd without a codec: every member ends the round with the
// identical mean of the members' models, by ring all-reduce in the view's ring order
// (allreduce_ring.h).
#include <cstdint>
#include <map>
#include <string>

#include "gossip/algorithms/allreduce_ring.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

class AllreduceSync final : public SyncAlgorithm {
 public:
  explicit AllreduceSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override { return ring_.drops(); }

 private:
  void round(double) override { ring_.run(); }

  AllreduceRing ring_;
};

}  // namespace starling::gossip
