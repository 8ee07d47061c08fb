#include "learners/replicas/trainer.h"

#include "learners/tasks/image_task.h"

#include <chrono>
#include <cmath>

namespace starling {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

TrainResult train(const TrainSpec& spec, const Dataset& train_data, const Dataset& test_data, TrainObserver& observer) {
  const auto task = std::make_shared<const ImageTask>(train_data, test_data);
  Learner learner(spec.learner, task);
  const int64_t per_epoch = learner.steps_per_epoch();
  const int64_t total = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(spec.epochs * per_epoch)));
  const int64_t eval_interval = std::max<int64_t>(1, static_cast<int64_t>(std::llround(spec.eval_every * per_epoch)));
  const Schedule schedule(spec.schedule, per_epoch, total);

  TrainResult result;
  const auto start = Clock::now();
  double eval_seconds = 0.0, loss_sum = 0.0;
  int64_t loss_count = 0;
  for (int64_t step = 0; step < total; ++step) {
    const double loss = learner.step(static_cast<float>(schedule.lr(step)));
    loss_sum += loss, ++loss_count;
    result.samples += spec.learner.batch;
    const double train_seconds = seconds_since(start) - eval_seconds;
    const double rate = result.samples / std::max(train_seconds, 1e-9);
    observer.on_step(step + 1, total, static_cast<double>(step + 1) / per_epoch, loss, rate);
    if ((step + 1) % eval_interval != 0 && step + 1 != total) continue;

    const auto eval_start = Clock::now();
    const Evaluation eval = task->evaluate(learner.model(), spec.learner.backend);
    eval_seconds += seconds_since(eval_start);
    EvalPoint point;
    point.step = step + 1;
    point.epoch = static_cast<double>(step + 1) / per_epoch;
    point.wall_seconds = seconds_since(start);
    point.train_loss = loss_sum / loss_count;
    point.test_accuracy = eval.accuracy, point.test_loss = eval.loss;
    point.samples_per_second = rate;
    point.samples = result.samples;
    point.compute_seconds = train_seconds;
    loss_sum = 0.0, loss_count = 0;
    if (!result.time_to_target_seconds && spec.target > 0 && task->reached(eval, spec.target))
      result.time_to_target_seconds = point.wall_seconds;
    result.history.push_back(point);
    observer.on_eval(point);
  }
  result.steps = total;
  result.wall_seconds = seconds_since(start);
  result.train_seconds = result.wall_seconds - eval_seconds;
  result.model_checksum = checksum_hex(learner.model().params(), learner.model().param_count());
  return result;
}

}  // namespace starling
