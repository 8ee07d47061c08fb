#pragma once
// A language model's peer in a job: the text loop's ModelMixer (learners/text_trainer.h) over
// gossip::PeerExchange, which mixes the model in place with the other peers' by the
// configured exchange (any synchronous mode or async gossip, with or without a codec or an
// outer optimizer). Its first round runs at start, on the initial model (the same on every
// peer: the same seed draws it). A peer of a text job starts with the others and cannot join one running:
// a start or an exchange that would move it to another position throws std::runtime_error.
#include "gossip/peer_exchange.h"
#include "learners/text_trainer.h"

#include <memory>

namespace starling::cli {

class PeerMixer final : public ModelMixer {
 public:
  explicit PeerMixer(gossip::ExchangeSpec spec) : spec_(std::move(spec)) {}
  void start(Model& model) override;
  void mix(int64_t step, double compute_seconds) override;
  uint64_t bytes_sent() const override { return exchange_ ? exchange_->bytes_sent() : 0; }
  uint64_t bytes_received() const override { return exchange_ ? exchange_->bytes_received() : 0; }
  /// Says goodbye to the peers (PeerExchange::finish); nothing when never started.
  void finish();
  /// The exchange, once started.
  const gossip::PeerExchange* exchange() const { return exchange_.get(); }

 private:
  gossip::ExchangeSpec spec_;
  std::unique_ptr<gossip::PeerExchange> exchange_;
};

}  // namespace starling::cli
