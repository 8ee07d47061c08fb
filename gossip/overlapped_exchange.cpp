// The exchange beside the compute (gossip/overlapped_exchange.h).
#include "gossip/overlapped_exchange.h"

#include <algorithm>

#include "gossip/transport/error.h"

namespace starling::gossip {

OverlappedExchange::OverlappedExchange(const ExchangeSpec& spec, std::size_t length)
    : snapshot_(length), mixed_(length) {
  exchange_ = std::make_unique<PeerExchange>(spec, protocols::Span<float>{mixed_.data(), mixed_.size()});
}

OverlappedExchange::~OverlappedExchange() {
  if (running_.valid()) running_.wait();
}

std::optional<Position> OverlappedExchange::start(float* model, std::uint64_t iteration) {
  std::copy(model, model + mixed_.size(), mixed_.begin());
  const auto joined = exchange_->start(iteration);
  if (joined) std::copy(mixed_.begin(), mixed_.end(), model);
  return joined;
}

void OverlappedExchange::take_snapshot(const float* model) {
  if (pending()) STARLING_GOSSIP_THROW(InvalidArgument, "an overlapped exchange is still pending");
  std::copy(model, model + snapshot_.size(), snapshot_.begin());
  std::copy(model, model + mixed_.size(), mixed_.begin());
}

void OverlappedExchange::begin(const float* model, std::uint64_t iteration, double compute_seconds) {
  take_snapshot(model);
  // A thread per mix: its start and the future's end are the barriers that hand the
  // PeerExchange (and its ZeroMQ sockets) over between this thread and the mixing one.
  running_ = std::async(std::launch::async, [this, iteration, compute_seconds] {
    const auto start = std::chrono::steady_clock::now();
    const auto moved = exchange_->exchange(iteration, compute_seconds);
    overlapped_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return moved;
  });
}

std::optional<Position> OverlappedExchange::complete(float* model) {
  if (!pending()) return std::nullopt;
  const auto moved = running_.get();  // the future is spent, error or not: nothing pending
  if (moved) {
    std::copy(mixed_.begin(), mixed_.end(), model);
  } else {
    for (std::size_t i = 0; i < mixed_.size(); ++i) model[i] += mixed_[i] - snapshot_[i];
  }
  return moved;
}

std::optional<Position> OverlappedExchange::exchange_now(float* model, std::uint64_t iteration, double compute_seconds) {
  take_snapshot(model);
  const auto moved = exchange_->exchange(iteration, compute_seconds);  // on this thread, waited for
  std::copy(mixed_.begin(), mixed_.end(), model);
  return moved;
}

}  // namespace starling::gossip
