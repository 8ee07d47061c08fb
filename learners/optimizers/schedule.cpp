#include "learners/optimizers/schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace starling {

Schedule::Schedule(const ScheduleSpec& spec, int64_t steps_per_epoch, int64_t total_steps)
    : spec_(spec), steps_per_epoch_(std::max<int64_t>(1, steps_per_epoch)), total_steps_(std::max<int64_t>(1, total_steps)) {
  if (spec.kind != "constant" && spec.kind != "step" && spec.kind != "cosine")
    throw std::invalid_argument("schedule: unknown kind '" + spec.kind + "' (expected constant, step or cosine)");
}

double Schedule::lr(int64_t step) const {
  if (step < spec_.warmup_steps) return spec_.lr * static_cast<double>(step + 1) / static_cast<double>(spec_.warmup_steps);
  if (spec_.kind == "step") {
    const double epoch = static_cast<double>(step) / static_cast<double>(steps_per_epoch_);
    return spec_.lr * std::pow(spec_.gamma, std::floor(epoch / spec_.step_epochs));
  }
  if (spec_.kind == "cosine") {
    const double span = static_cast<double>(std::max<int64_t>(1, total_steps_ - spec_.warmup_steps));
    const double progress = std::min(1.0, static_cast<double>(step - spec_.warmup_steps) / span);
    return spec_.min_lr + (spec_.lr - spec_.min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  return spec_.lr;
}

bool Schedule::is_drop(int64_t step) const {
  return spec_.kind == "step" && step > 0 && step >= spec_.warmup_steps && lr(step) < lr(step - 1);
}

}  // namespace starling
