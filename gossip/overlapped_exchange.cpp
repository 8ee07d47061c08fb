// Double-buffered exchange on a worker thread (gossip/overlapped_exchange.h).
#include "gossip/overlapped_exchange.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "gossip/error.h"

#include <utility>

namespace starling::gossip {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// ‖a − b‖ / ‖b‖ (0 for a zero b).
double relative_change(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : 0.0;
}

}  // namespace

OverlappedExchange::OverlappedExchange(const ExchangeSpec& spec, std::size_t length)
    : base_(length), snapshot_(length) {
  exchange_ = std::make_unique<PeerExchange>(spec, protocols::Span<float>{snapshot_.data(), snapshot_.size()});
  // Starting the thread is the memory barrier ZeroMQ needs for the transport's owner
  // socket to be used from the worker from now on.
  worker_ = std::thread([this] { serve(); });
}

OverlappedExchange::~OverlappedExchange() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !busy_; });
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
  exchange_.reset();  // back on the constructing thread's side of the barrier join() gave
}

void OverlappedExchange::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return busy_ || stopping_; });
    if (stopping_ && !busy_) return;
    std::function<void()> job = std::move(job_);
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    busy_ = false;
    changed_.notify_all();
  }
}

void OverlappedExchange::start(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = std::move(job);
    error_ = nullptr;
    busy_ = true;
  }
  changed_.notify_all();
}

void OverlappedExchange::wait_for_job() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !busy_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void OverlappedExchange::begin(const float* model, std::uint64_t step, double compute_seconds) {
  if (pending_) STARLING_GOSSIP_THROW(InvalidArgument, "an overlapped exchange is still pending");
  std::copy(model, model + base_.size(), base_.begin());
  std::copy(base_.begin(), base_.end(), snapshot_.begin());
  pending_ = true;
  start([this, step, compute_seconds] { exchange_->exchange(step, compute_seconds); });
}

double OverlappedExchange::complete(float* model) {
  if (!pending_) return 0.0;
  const auto start_wait = std::chrono::steady_clock::now();
  pending_ = false;
  wait_for_job();
  const double waited = seconds_since(start_wait);
  // The steps taken since the snapshot (model − base) stay; the snapshot's part becomes the mix.
  for (std::size_t i = 0; i < base_.size(); ++i) model[i] += snapshot_[i] - base_[i];
  last_distance_ = relative_change(snapshot_, base_);
  return waited;
}

double OverlappedExchange::exchange_now(float* model, std::uint64_t step, double compute_seconds, bool close) {
  const auto start_at = std::chrono::steady_clock::now();
  complete(model);
  std::copy(model, model + base_.size(), base_.begin());
  std::copy(base_.begin(), base_.end(), snapshot_.begin());
  start([this, step, compute_seconds, close] {
    exchange_->exchange(step, compute_seconds);
    if (close) exchange_->average_models();
  });
  wait_for_job();
  std::copy(snapshot_.begin(), snapshot_.end(), model);
  last_distance_ = relative_change(snapshot_, base_);
  return seconds_since(start_at);
}

}  // namespace starling::gossip
