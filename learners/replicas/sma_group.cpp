#include "learners/replicas/sma_group.h"

#include "learners/replicas/sma.h"

#include <chrono>
#include <thread>

namespace starling::sma {
namespace {

// How long a waiter polls before it sleeps; yields while polling so that learners still
// computing get the core when there are more learners than cores.
constexpr auto kSpin = std::chrono::microseconds(200);

}  // namespace

SpinBarrier::SpinBarrier(int parties) : parties_(parties) {}

// Sequentially consistent throughout: the last arriver's generation store and its read of
// sleepers_ must not pass a sleeper's increment and its read of the generation (Dekker).
bool SpinBarrier::arrive_and_wait() {
  if (aborted()) return false;
  const uint64_t generation = generation_.load();
  if (arrived_.fetch_add(1) + 1 == parties_) {
    arrived_.store(0);
    generation_.store(generation + 1);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);  // a sleeper between its check and its wait sees the change
      wake_.notify_all();
    }
    return !aborted();
  }
  auto passed = [&] { return generation_.load() != generation || aborted(); };
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  while (!passed() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  if (!passed()) {
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, passed);
    sleepers_.fetch_sub(1);
  }
  return !aborted();
}

void SpinBarrier::abort() {
  aborted_.store(true);
  std::lock_guard<std::mutex> lock(mutex_);
  wake_.notify_all();
}

SmaGroup::SmaGroup(float* z, float* z_prev, int learners, std::size_t n, float alpha, float momentum)
    : z_(z),
      z_prev_(z_prev),
      replicas_(static_cast<std::size_t>(learners), nullptr),
      n_(n),
      alpha_(alpha),
      momentum_(momentum),
      barrier_(static_cast<int>(replicas_.size())) {}

bool SmaGroup::round(int j, float* replica, RoundTimes* times) {
  using Clock = std::chrono::steady_clock;
  auto now = [times] { return times ? Clock::now() : Clock::time_point{}; };  // no clock reads untimed
  const Clock::time_point start = now();
  replicas_[static_cast<std::size_t>(j)] = replica;  // published to the others by the barrier
  if (!barrier_.arrive_and_wait()) return false;  // every replica has taken its step
  const Clock::time_point arrived = now();
  const int k = size();
  average_slice(z_, z_prev_, replicas_.data(), k, alpha_, momentum_, slice_bound(n_, k, j), slice_bound(n_, k, j + 1));
  const Clock::time_point averaged = now();
  const bool whole = barrier_.arrive_and_wait();  // every slice is averaged: replicas and z are whole again
  if (times) {
    times->waiting += std::chrono::duration<double>(arrived - start + (now() - averaged)).count();
    times->averaging += std::chrono::duration<double>(averaged - arrived).count();
  }
  return whole;
}

void SmaGroup::abort(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(why_mutex_);
    if (why_.empty()) why_ = why;
  }
  barrier_.abort();
}

std::string SmaGroup::why() const {
  std::lock_guard<std::mutex> lock(why_mutex_);
  return why_;
}

}  // namespace starling::sma
