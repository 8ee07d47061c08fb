#pragma once
// A language model's peer in a job: the text loop's ModelMixer (learners/text_trainer.h) over
// gossip::PeerExchange, which mixes the model in place with the other peers' by the
// configured exchange (any synchronous mode or async gossip, with or without a codec or an
// outer optimizer). Its first round runs at start, on the initial model (the same on every
// peer: the same seed draws it). A peer that joins a running job (`starling peer --join`), or
// that an exchange moves to where the job is (it was left out and taken back, or fell
// behind), gets the job's model in place and returns the job's step for the text loop to go
// on from; averaging gradients, that throws std::runtime_error instead.
// Every peer of a job resumed together from its checkpoints at one step continues exactly:
// the exchange algorithm's state (DiLoCo's x₀, outer momentum and error feedback) rides in
// section "exchange" (actors/exchange_section.h), and no first round runs again.
//
// With `gradients` (exchange.average = "gradients", an all-reduce every step), the exchange
// runs on the model's gradient instead, between each step's backward pass and its optimizer
// step (average_gradients, TextLearnerSpec::on_gradients), and mix() does nothing: every
// peer then steps AdamW on the same averaged gradient from the same model, as PyTorch's DDP.
//
// With `overlap` (exchange.overlap), a mix that need not be strict runs beside the next
// steps on a snapshot of the model (gossip/overlapped_exchange.h) and lands at the next
// settle() or mix() (the text loop settles exchange.overlap_steps after the mix) as
// model + (mixed − snapshot): DiLoCo's outer step, say, arrives late and the inner steps
// taken meanwhile are kept, as in Streaming DiLoCo's overlapped communication.
#include "gossip/overlapped_exchange.h"
#include "gossip/peer_exchange.h"
#include "learners/text_trainer.h"

#include <memory>
#include <optional>

namespace starling::cli {

class PeerMixer final : public ModelMixer {
 public:
  PeerMixer(gossip::ExchangeSpec spec, bool gradients, bool overlap)
      : spec_(std::move(spec)), gradients_(gradients), overlap_(overlap) {}
  std::optional<int64_t> start(Model& model) override;
  std::optional<int64_t> mix(int64_t step, double compute_seconds, bool strict) override;
  std::optional<int64_t> settle() override;
  /// The gradient all-reduce of one step, in place on the gradient start() was given.
  void average_gradients();
  uint64_t bytes_sent() const override { return exchange() ? exchange()->bytes_sent() : 0; }
  uint64_t bytes_received() const override { return exchange() ? exchange()->bytes_received() : 0; }
  double seconds_in_steps() const override { return gradient_seconds_; }
  void save(Checkpoint& c) const override;
  void resume(const Checkpoint& c, const Model& model, int64_t step) override;
  /// Says goodbye to the peers (PeerExchange::finish); nothing when never started.
  void finish();
  /// The exchange, once started (null before).
  const gossip::PeerExchange* exchange() const { return running(); }
  /// Seconds the overlapped mixes ran beside the steps (0 without overlap).
  double overlapped_seconds() const { return overlapped_ ? overlapped_->overlapped_seconds() : 0.0; }

 private:
  gossip::ExchangeSpec spec_;
  bool gradients_ = false;
  bool overlap_ = false;
  float* model_ = nullptr;  // what the mixes work on: the model's parameters, or its gradient
  std::unique_ptr<gossip::PeerExchange> in_place_;           // without overlap
  std::unique_ptr<gossip::OverlappedExchange> overlapped_;  // with it
  gossip::PeerExchange* running() const { return overlapped_ ? &overlapped_->peers() : in_place_.get(); }
  uint64_t gradient_rounds_ = 0;
  int64_t resumed_at_ = 0;  // 0: a fresh start
  std::optional<gossip::AlgorithmState> resumed_state_;
  double gradient_seconds_ = 0.0;
};

}  // namespace starling::cli
