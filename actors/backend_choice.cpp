#include "actors/backend_choice.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace starling::actors {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// CPU time of this thread: on a shared host, time another process held the core is left out,
// so a round in which the scheduler preempted one backend does not decide the choice.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double timed_step(Learner& learner, float lr) {
  const double start = thread_seconds();
  learner.step(lr);
  return thread_seconds() - start;
}

}  // namespace

BackendChoice choose_backend(std::vector<double> native_steps, std::vector<double> onednn_steps) {
  const double native = median(std::move(native_steps)), onednn = median(std::move(onednn_steps));
  BackendChoice choice;
  choice.backend = onednn < native ? kernels::Backend::onednn : kernels::Backend::native;
  const bool native_won = choice.backend == kernels::Backend::native;
  const double ratio = native_won ? onednn / native : native / onednn;
  char line[200];
  std::snprintf(line, sizeof line, "backend auto: %s %.2fx %s (native %.2f ms, onednn %.2f ms a step)",
                native_won ? "native" : "onednn", ratio, native_won ? "onednn" : "native", native * 1e3, onednn * 1e3);
  choice.note = line;
  return choice;
}

BackendChoice time_and_choose_backend(LearnerSpec spec, const std::shared_ptr<const Task>& task, double budget_seconds) {
  if (!kernels::backend_available(kernels::Backend::onednn))
    return {kernels::Backend::native, "backend auto: native (this build has no oneDNN backend)"};
  spec.backend = kernels::Backend::native;
  Learner native(spec, task);
  spec.backend = kernels::Backend::onednn;
  Learner onednn(spec, task);
  // A small rate: the replicas are thrown away, but a diverging one would time NaN paths.
  const float lr = 1e-4f;
  timed_step(native, lr), timed_step(onednn, lr);  // first steps pay for allocation and oneDNN's primitives
  std::vector<double> native_steps, onednn_steps;
  double spent = 0.0;
  while (native_steps.size() < 5 && (native_steps.size() < 1 || spent < budget_seconds)) {
    native_steps.push_back(timed_step(native, lr));
    onednn_steps.push_back(timed_step(onednn, lr));
    spent += native_steps.back() + onednn_steps.back();
  }
  return choose_backend(std::move(native_steps), std::move(onednn_steps));
}

}  // namespace starling::actors
