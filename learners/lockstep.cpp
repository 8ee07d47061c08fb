#include "learners/lockstep.h"

#include <stdexcept>

namespace starling {

Lockstep::Lockstep(int parties) : start_(parties), done_(parties) {
  if (parties < 1) throw std::invalid_argument("lockstep: at least one party");
  for (int j = 1; j < parties; ++j) threads_.emplace_back([this, j] { serve(j); });
}

Lockstep::~Lockstep() {
  stopping_ = true;  // published to the workers by start_
  start_.arrive_and_wait();
  for (auto& t : threads_) t.join();
}

void Lockstep::serve(int j) {
  while (true) {
    start_.arrive_and_wait();
    if (stopping_) return;
    call(j);
    done_.arrive_and_wait();
  }
}

void Lockstep::call(int j) {
  try {
    (*task_)(j);
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void Lockstep::run(const std::function<void(int)>& task) {
  task_ = &task;
  error_ = nullptr;
  start_.arrive_and_wait();
  call(0);
  done_.arrive_and_wait();  // every task has returned, and its writes are visible here
  task_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace starling
