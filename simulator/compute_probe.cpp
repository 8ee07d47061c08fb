// The compute side of the model: a real Learner stepping on synthetic data of the model's
// input shape at the run's per-learner batch. Timing the real step (not FLOPs over a peak)
// is what makes the skinny-GEMM effect of small batches show: at batch 8 a step is far
// from 4x cheaper than at batch 32.
#include "kernels/gemm.h"
#include "simulator/median.h"
#include "simulator/probes.h"

#include <algorithm>

namespace starling::simulator {

double measure_step_seconds(const LearnerSpec& learner, int kernel_threads, double seconds_budget) {
  const int previous_threads = kernels::threads();
  kernels::set_threads(std::max(1, kernel_threads));
  const uint32_t samples = static_cast<uint32_t>(std::max(512, learner.batch * 8));
  const TrainTest data = make_synthetic(samples, 1, learner.seed, learner.model.input, learner.model.classes);
  LearnerSpec spec = learner;
  spec.shard = 0, spec.shards = 1;
  Learner replica(spec, data.train);
  const float lr = 1e-4f;  // small: the weights stay sane over the probe
  const double start = now_seconds();
  for (int i = 0; i < 3; ++i) replica.step(lr);  // warm-up: first touches, packing buffers
  // Repeats of a few steps each; stop at the budget but keep at least 5 repeats.
  const double once = std::max(1e-6, (now_seconds() - start) / 3);
  const int per_repeat = std::clamp(static_cast<int>(0.02 / once), 1, 64);
  std::vector<double> repeats;
  while (repeats.size() < 5 || (now_seconds() - start < seconds_budget && repeats.size() < 41)) {
    const double t0 = now_seconds();
    for (int i = 0; i < per_repeat; ++i) replica.step(lr);
    repeats.push_back((now_seconds() - t0) / per_repeat);
  }
  kernels::set_threads(previous_threads);
  return median(repeats);
}

}  // namespace starling::simulator
