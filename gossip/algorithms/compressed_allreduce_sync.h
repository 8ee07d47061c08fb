#pragma once
// Modes allreduce and local-sgd with a codec: every member ends the round with the identical
// common model plus the mean of the members' compressed changes, with error feedback
// (compressed_allreduce.h). Its first round in a view is an uncompressed all-reduce. state()
// is the common model, then the compressed all-reduce's state (this member's error feedback
// and where its codec streams' draws stand), which a checkpoint keeps: a job resumed together
// goes on with the uninterrupted job's bits.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gossip/algorithms/compressed_allreduce.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

class CompressedAllreduceSync final : public DensitySync {
 public:
  explicit CompressedAllreduceSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override { return allreduce_.drops(); }
  void set_density(double density) override { allreduce_.set_density(density); }
  bool last_round_compressed() const override { return allreduce_.runs() > 1; }
  std::vector<float> state() const override;
  bool restore(const std::vector<float>& values) override;
  /// The common model the next changes are taken from, once there is one.
  std::vector<protocols::Span<float>> shared_state() override {
    if (allreduce_.runs() == 0) return {};
    return {allreduce_.base()};
  }

 private:
  void round(double) override { allreduce_.run(); }

  CompressedAllreduce allreduce_;
};

}  // namespace starling::gossip
