#pragma once
// compression.adaptive: the codec algorithm of the mode (CHOCO-SGD for gossip, the
// compressed all-reduce otherwise) with its density steered so that communication hides
// behind computation (adaptive_compression.h). Each round is timed; the controller, which
// outlives the view (SyncSetup::adaptive), decides the density of the next round, and each
// change goes to spec.on_adjust. A round that was not compressed (the compressed
// all-reduce's first) is not measured: it says nothing about the density.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

class AdaptiveCompressionSync final : public SyncAlgorithm {
 public:
  /// InvalidArgument without a controller in the setup.
  explicit AdaptiveCompressionSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override { return inner_->drops(); }
  std::vector<protocols::Span<float>> shared_state() override { return inner_->shared_state(); }

 private:
  void round(double compute_seconds) override;

  std::unique_ptr<DensitySync> inner_;
  AdaptiveCompression* controller_;
  std::function<void(const std::string&)> on_adjust_;
};

}  // namespace starling::gossip
