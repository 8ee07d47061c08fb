#pragma once
// The single-learner training loop of `starling train` before actors take over: steps on
// the schedule, evaluation every eval_every epochs, progress and metrics to an observer.
#include "learners/learner.h"
#include "learners/schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace starling {

struct TrainSpec {
  LearnerSpec learner;
  ScheduleSpec schedule;
  double epochs = 1.0;
  double eval_every = 1.0;  // in epochs
  double target_accuracy = 0.0;
};

struct EvalPoint {
  int64_t step = 0;
  double epoch = 0.0;
  double wall_seconds = 0.0;
  double train_loss = 0.0;  // mean over the steps since the previous point
  double test_accuracy = 0.0;
  double test_loss = 0.0;
  double samples_per_second = 0.0;  // training samples over training time so far
};

struct TrainResult {
  std::vector<EvalPoint> history;
  int64_t steps = 0;
  int64_t samples = 0;
  double wall_seconds = 0.0;
  double train_seconds = 0.0;  // wall time less evaluation
  std::optional<double> time_to_target_seconds;
  std::string model_checksum;
  const EvalPoint& last() const { return history.back(); }
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void on_step(int64_t /*step*/, int64_t /*total_steps*/, double /*epoch*/, double /*loss*/,
                       double /*samples_per_second*/) {}
  virtual void on_eval(const EvalPoint& /*point*/) {}
};

/// Runs the whole training; throws std::invalid_argument on an impossible spec.
TrainResult train(const TrainSpec& spec, const Dataset& train_data, const Dataset& test_data, TrainObserver& observer);

}  // namespace starling
