#pragma once
// Threads that run one task together, call after call: run(task) calls task(j) for every
// j in [0, parties), j = 0 on the calling thread and each other j on a thread of its own
// that lives as long as the object, and returns when every call has returned. A node's
// language-model learners step this way (learners/text_learners.h), each on its own core,
// with the caller free to validate, mix and checkpoint between steps.
//
// Tasks may wait for each other inside run() (an SMA round, learners/sma_group.h): every
// party runs every call. A task that throws must first release any party waiting for it;
// run() rethrows the first exception once every task has returned.
#include "learners/sma_group.h"

#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace starling {

class Lockstep {
 public:
  /// Starts parties − 1 threads; parties must be at least 1.
  explicit Lockstep(int parties);
  /// Stops and joins the threads; must not run while run() does.
  ~Lockstep();
  Lockstep(const Lockstep&) = delete;
  Lockstep& operator=(const Lockstep&) = delete;

  int parties() const { return static_cast<int>(threads_.size()) + 1; }
  /// Calls task(j) for every party, in parallel; see the header comment.
  void run(const std::function<void(int)>& task);

 private:
  void serve(int j);
  void call(int j);

  // Both barriers spin briefly before they sleep: between steps a worker waits a step's
  // imbalance (microseconds) or the caller's validation (seconds).
  sma::SpinBarrier start_, done_;
  const std::function<void(int)>* task_ = nullptr;  // the call in progress, published by start_
  bool stopping_ = false;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace starling
