// The compute side of the model: real Learners stepping on synthetic data of the model's
// input shape at the run's per-learner batch. Timing the real step (not FLOPs over a peak)
// is what makes the skinny-GEMM effect of small batches show: at batch 8 a step is far
// from 4x cheaper than at batch 32. Several replicas stepping at once show what sharing
// the machine costs each of them.
#include "kernels/gemm.h"
#include "learners/tasks/image_task.h"
#include "simulator/median.h"
#include "simulator/probes.h"

#include <algorithm>
#include <thread>

namespace starling::simulator {
namespace {

// One replica's mean step time over repeats of a few steps, within the budget: a run's
// samples/s pays for its slow steps too (a descheduled thread, another tenant's burst),
// which a median would leave out.
double time_steps(Learner& replica, double seconds_budget) {
  const float lr = 1e-4f;  // small: the weights stay sane over the probe
  const double start = now_seconds();
  for (int i = 0; i < 3; ++i) replica.step(lr);  // warm-up: first touches, packing buffers
  const double once = std::max(1e-6, (now_seconds() - start) / 3);
  const int per_repeat = std::clamp(static_cast<int>(0.02 / once), 1, 64);
  std::vector<double> repeats;
  while (repeats.size() < 5 || (now_seconds() - start < seconds_budget && repeats.size() < 41)) {
    const double t0 = now_seconds();
    for (int i = 0; i < per_repeat; ++i) replica.step(lr);
    repeats.push_back((now_seconds() - t0) / per_repeat);
  }
  return mean(repeats);
}

}  // namespace

double measure_step_seconds(const LearnerSpec& learner, int kernel_threads, int concurrent, double seconds_budget) {
  const int previous_threads = kernels::threads();
  kernels::set_threads(std::max(1, kernel_threads));
  const uint32_t samples = static_cast<uint32_t>(std::max(512, learner.batch * 8));
  const TrainTest data = make_synthetic(samples, 1, learner.seed, learner.model.input, learner.model.classes);
  LearnerSpec spec = learner;
  spec.shard = 0, spec.shards = 1;
  const auto task = std::make_shared<const ImageTask>(data.train, data.test);
  const int n = std::max(1, concurrent);
  std::vector<double> times(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      Learner replica(spec, task);
      times[static_cast<std::size_t>(i)] = time_steps(replica, seconds_budget);
    });
  for (auto& t : threads) t.join();
  kernels::set_threads(previous_threads);
  return mean(times);
}

}  // namespace starling::simulator
