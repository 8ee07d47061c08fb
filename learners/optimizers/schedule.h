#pragma once
// Learning-rate schedules as a pure function of the step: linear warm-up, then constant,
// step decay (× gamma every step_epochs) or cosine decay to min_lr at the last step:
// lr(s) = min_lr + (lr − min_lr)·(1 + cos(π·(s − warmup)/(total − warmup)))/2.
#include <cstdint>
#include <string>

namespace starling {

struct ScheduleSpec {
  std::string kind = "constant";  // "constant" | "step" | "cosine"
  double lr = 0.05;
  int64_t warmup_steps = 0;
  double step_epochs = 1.0;  // for "step"
  double gamma = 0.1;        // for "step"
  double min_lr = 0.0;       // for "cosine": the rate it decays to
};

class Schedule {
 public:
  /// Throws std::invalid_argument on an unknown kind.
  Schedule(const ScheduleSpec& spec, int64_t steps_per_epoch, int64_t total_steps);
  double lr(int64_t step) const;
  /// True when the decayed rate at `step` is lower than at `step - 1` outside warm-up: SMA
  /// resets replicas to the central model there. The first step after warm-up counts, as the
  /// rate decayed meanwhile falls below warm-up's peak there; step 0 has no step before it.
  bool is_drop(int64_t step) const;

 private:
  ScheduleSpec spec_;
  int64_t steps_per_epoch_, total_steps_;
};

}  // namespace starling
