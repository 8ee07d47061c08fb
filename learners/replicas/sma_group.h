#pragma once
// SMA rounds that a node's learners run among themselves, without the node: after a step
// every learner arrives at a barrier, then averages its own slice of z and of every replica
// (sma::average_slice), then waits until all slices are done, so its next step starts from
// the corrected replica. Same arithmetic, same bits as a node-driven round, but no message
// hops per step: the node's order covers every step up to its next own event.
//
// Every member must run each round; the members must run concurrently (threads of their
// own), since a member waits for the others. abort() releases every waiting member.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace starling::sma {

/// A reusable barrier for a fixed number of threads that spins briefly (the expected wait is
/// the learners' imbalance, tens of µs) before it sleeps, because waking a sleeping thread
/// costs tens of µs itself on virtual machines.
class SpinBarrier {
 public:
  explicit SpinBarrier(int parties);
  /// False when the barrier was aborted before or while waiting.
  bool arrive_and_wait();
  void abort();
  bool aborted() const { return aborted_.load(); }

 private:
  const int parties_;
  std::atomic<int> arrived_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> aborted_{false};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
};

/// Where a member's round went, in seconds: at the two barriers, and averaging its slice.
struct RoundTimes {
  double waiting = 0.0;
  double averaging = 0.0;
};

class SmaGroup {
 public:
  /// z and z_prev are the node's central model and its previous value (n floats each) for
  /// `learners` members; none is owned, all must outlive the group.
  SmaGroup(float* z, float* z_prev, int learners, std::size_t n, float alpha, float momentum);

  /// Learner j's share of one round; false when the group was aborted (learner j must stop).
  /// `replica` is learner j's parameters (the same every round). With `times`, adds the
  /// round's waits and averaging to it.
  bool round(int j, float* replica, RoundTimes* times = nullptr);
  /// Releases every member waiting in round(), now and later (a member failed or the node
  /// stops); the first non-empty `why` is kept for the members to report.
  void abort(const std::string& why = {});
  std::string why() const;
  int size() const { return static_cast<int>(replicas_.size()); }

 private:
  float* z_;
  float* z_prev_;
  std::vector<float*> replicas_;
  std::size_t n_;
  float alpha_, momentum_;
  SpinBarrier barrier_;
  mutable std::mutex why_mutex_;
  std::string why_;
};

}  // namespace starling::sma
