#pragma once
// kernels.backend = "auto": at start, a few interleaved steps of the configured learner on
// each backend, timed by the thread's CPU time, and the faster kept. The choice is a pure
// function of the timings, so that it is tested without a clock.
#include "learners/replicas/learner.h"

#include <string>
#include <vector>

namespace starling::actors {

/// The config's name for this choice; kernels::kBackendNames has the backends themselves.
inline constexpr const char* kAutoBackendName = "auto";

struct BackendChoice {
  kernels::Backend backend = kernels::Backend::native;
  std::string note;  // for the log: which, by how much, and each backend's step
};

/// The faster by the median of each backend's step times (seconds, one per round; neither
/// empty); a tie goes to native, whose kernels need no oneDNN at all.
BackendChoice choose_backend(std::vector<double> native_steps, std::vector<double> onednn_steps);

/// Times a learner with `spec` on each backend this build has (rounds interleaved, after a
/// step each to warm up, stopping after `budget_seconds` of steps or 5 rounds) and chooses;
/// native without timing when the build has no oneDNN.
BackendChoice time_and_choose_backend(LearnerSpec spec, const std::shared_ptr<const Task>& task, double budget_seconds = 0.25);

}  // namespace starling::actors
