// A language model's peer over gossip::PeerExchange (cli/text_mixer.h).
#include "cli/text_mixer.h"

#include "actors/exchange_section.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>

namespace starling::cli {
namespace {

constexpr const char* kNoGradientJoin =
    "a language model's peer that averages gradients (exchange.average = \"gradients\") cannot join a running job "
    "or be moved to where it is: its peers start together";

// Where the job is, for the text loop to go on from; the exchange has put the job's model in place.
std::optional<int64_t> go_on_from(const std::optional<gossip::Position>& moved, const char* how) {
  if (!moved) return std::nullopt;
  const auto step = static_cast<int64_t>(moved->iteration);
  spdlog::info("{} the running job: continuing from its step {} (round {})", how, step, moved->round);
  return step;
}

}  // namespace

std::optional<int64_t> PeerMixer::start(Model& model) {
  spec_.tensor_sizes = model.tensor_sizes();
  model_ = gradients_ ? model.grads() : model.params();
  const std::size_t n = model.param_count();
  if (overlap_) overlapped_ = std::make_unique<gossip::OverlappedExchange>(spec_, n);
  else in_place_ = std::make_unique<gossip::PeerExchange>(spec_, protocols::Span<float>{model_, n});
  if (resumed_state_) running()->resume(*resumed_state_);
  const auto at = static_cast<uint64_t>(resumed_at_);
  const auto moved = overlapped_ ? overlapped_->start(model_, at) : in_place_->start(at);
  if (moved && gradients_) throw std::runtime_error(kNoGradientJoin);
  if (moved) return go_on_from(moved, "joined");
  // A round on the models as drawn, alike everywhere: DiLoCo's x₀ is the initial model, and
  // a compressed all-reduce finds its common model without sending it. Gradients have none,
  // and a resumed run had it long ago.
  if (!gradients_ && resumed_at_ == 0) return mix(0, 0.0, true);
  return std::nullopt;
}

void PeerMixer::save(Checkpoint& c) const {
  if (exchange()) actors::put_exchange_state(c, exchange()->algorithm_state());
}

void PeerMixer::resume(const Checkpoint& c, const Model& model, int64_t step) {
  resumed_at_ = step;
  gradient_rounds_ = static_cast<uint64_t>(step);
  resumed_state_.reset();
  if (!c.has("exchange")) return;  // an algorithm without state: every peer counts rounds from 0 again alike
  resumed_state_ = actors::get_exchange_state(c.reader("exchange"), model.param_count());
  spec_.first_round = resumed_state_->round;  // the state fits only the round it was taken at
}

std::optional<int64_t> PeerMixer::mix(int64_t step, double compute_seconds, bool strict) {
  if (gradients_) return std::nullopt;
  const auto at = static_cast<uint64_t>(step);
  if (!overlapped_) return go_on_from(in_place_->exchange(at, compute_seconds), "moved to");
  if (const auto moved = settle()) return moved;
  if (!strict) {
    overlapped_->begin(model_, at, compute_seconds);
    return std::nullopt;
  }
  return go_on_from(overlapped_->exchange_now(model_, at, compute_seconds), "moved to");
}

std::optional<int64_t> PeerMixer::settle() {
  return overlapped_ ? go_on_from(overlapped_->complete(model_), "moved to") : std::nullopt;
}

void PeerMixer::average_gradients() {
  const auto begin = std::chrono::steady_clock::now();
  if (in_place_->exchange(++gradient_rounds_, 0.0)) throw std::runtime_error(kNoGradientJoin);
  gradient_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void PeerMixer::finish() {
  if (auto* peers = running()) peers->finish();  // the last mix was strict: none is in flight
}

}  // namespace starling::cli
