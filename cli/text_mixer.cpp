// A language model's peer over gossip::PeerExchange (cli/text_mixer.h).
#include "cli/text_mixer.h"

#include "actors/exchange_section.h"

#include <chrono>
#include <stdexcept>

namespace starling::cli {
namespace {

[[noreturn]] void cannot_move(const char* when) {
  throw std::runtime_error(std::string("a language model's peer cannot continue from the running job's position (") + when +
                           "): text peers start together and do not join a job that runs");
}

}  // namespace

void PeerMixer::start(Model& model) {
  spec_.tensor_sizes = model.tensor_sizes();
  model_ = gradients_ ? model.grads() : model.params();
  const std::size_t n = model.param_count();
  if (overlap_) {
    overlapped_ = std::make_unique<gossip::OverlappedExchange>(spec_, n);
    exchange_ = &overlapped_->peers();
  } else {
    in_place_ = std::make_unique<gossip::PeerExchange>(spec_, protocols::Span<float>{model_, n});
    exchange_ = in_place_.get();
  }
  if (resumed_state_) exchange_->resume(*resumed_state_);
  const auto moved = overlapped_ ? overlapped_->start(model_, static_cast<uint64_t>(resumed_at_))
                                 : exchange_->start(static_cast<uint64_t>(resumed_at_));
  if (moved) cannot_move("at start");
  // A round on the models as drawn, alike everywhere: DiLoCo's x₀ is the initial model, and
  // a compressed all-reduce finds its common model without sending it. Gradients have none,
  // and a resumed run had it long ago.
  if (!gradients_ && resumed_at_ == 0) mix(0, 0.0, true);
}

void PeerMixer::save(Checkpoint& c) const {
  if (exchange_) actors::put_exchange_state(c, exchange_->algorithm_state());
}

void PeerMixer::resume(const Checkpoint& c, const Model& model, int64_t step) {
  resumed_at_ = step;
  gradient_rounds_ = static_cast<uint64_t>(step);
  resumed_state_.reset();
  if (!c.has("exchange")) return;  // an algorithm without state: every peer counts rounds from 0 again alike
  resumed_state_ = actors::get_exchange_state(c.reader("exchange"), model.param_count());
  spec_.first_round = resumed_state_->round;  // the state fits only the round it was taken at
}

void PeerMixer::mix(int64_t step, double compute_seconds, bool strict) {
  if (gradients_) return;
  const auto at = static_cast<uint64_t>(step);
  if (!overlapped_) {
    if (exchange_->exchange(at, compute_seconds)) cannot_move("after a view change");
    return;
  }
  settle();
  if (!strict) return overlapped_->begin(model_, at, compute_seconds);
  if (overlapped_->exchange_now(model_, at, compute_seconds)) cannot_move("after a view change");
}

void PeerMixer::settle() {
  if (overlapped_ && overlapped_->complete(model_)) cannot_move("after a view change");
}

void PeerMixer::average_gradients() {
  const auto begin = std::chrono::steady_clock::now();
  if (exchange_->exchange(++gradient_rounds_, 0.0)) cannot_move("after a view change");
  gradient_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void PeerMixer::finish() {
  if (!exchange_) return;
  settle();
  exchange_->finish();
}

}  // namespace starling::cli
