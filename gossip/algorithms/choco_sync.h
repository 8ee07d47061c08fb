#pragma once
// Mode gossip with a codec, CHOCO-SGD (Koloskova et al. 2019): one round of compressed
// differences to public copies over the view's topology (choco_gossip.h). The public copies
// start at zero in every view; state() is them and where the codec streams' draws stand, which
// a checkpoint keeps, so a job resumed together goes on with the uninterrupted job's bits.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gossip/algorithms/choco_gossip.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

class ChocoSync final : public DensitySync {
 public:
  explicit ChocoSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override { return choco_.drops(); }
  void set_density(double density) override { choco_.set_density(density); }
  std::vector<float> state() const override { return choco_.state(); }
  bool restore(const std::vector<float>& values) override {
    return values.empty() || choco_.resume(values, model_.size());
  }

 private:
  void round(double) override { choco_.run(model_); }

  protocols::Span<float> model_;
  ChocoGossip choco_;
};

}  // namespace starling::gossip
