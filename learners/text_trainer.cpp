#include "learners/text_trainer.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace starling {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

TrainResult train_text(const TextTrainSpec& spec, const TextCorpus& corpus, const TextPart& part, TrainObserver& observer) {
  if (spec.steps < 1) throw std::invalid_argument("text training: steps must be at least 1");
  if (spec.mixer && spec.period < 1) throw std::invalid_argument("text training: the exchange period must be at least 1");
  TextLearner learner(spec.learner, corpus, part);
  if (spec.mixer) spec.mixer->start(learner.model());
  // An epoch is as many windows as the part offers starts, as nanoGPT counts them.
  const double windows_per_epoch = static_cast<double>(learner.window_starts());
  const int64_t per_epoch = std::max<int64_t>(1, static_cast<int64_t>(windows_per_epoch / spec.learner.batch));
  const Schedule schedule(spec.schedule, per_epoch, spec.steps);

  TrainResult result;
  const auto start = Clock::now();
  double eval_seconds = 0.0, exchange_seconds = 0.0, compute_at_mix = 0.0, loss_sum = 0.0;
  int64_t loss_count = 0;
  for (int64_t step = 0; step < spec.steps; ++step) {
    loss_sum += learner.step(static_cast<float>(schedule.lr(step)));
    ++loss_count;
    result.samples += spec.learner.batch;
    const bool last = step + 1 == spec.steps;
    if (spec.mixer && ((step + 1) % spec.period == 0 || last)) {
      const double computed = seconds_since(start) - eval_seconds - exchange_seconds;
      const auto mix_start = Clock::now();
      spec.mixer->mix(step + 1, computed - compute_at_mix);
      exchange_seconds += seconds_since(mix_start);
      compute_at_mix = computed;
    }
    const double train_seconds = seconds_since(start) - eval_seconds;
    const double rate = result.samples / std::max(train_seconds, 1e-9);
    const double epoch = result.samples / windows_per_epoch;
    observer.on_step(step + 1, spec.steps, epoch, loss_sum / loss_count, rate);
    const bool due = spec.eval_steps > 0 && (step + 1) % spec.eval_steps == 0;
    if (!due && !last) continue;

    const auto eval_start = Clock::now();
    const TextEvaluation eval = evaluate_text(learner.model(), spec.learner.backend, corpus);
    eval_seconds += seconds_since(eval_start);
    EvalPoint point;
    point.step = step + 1;
    point.epoch = epoch;
    point.wall_seconds = seconds_since(start);
    point.train_loss = loss_sum / loss_count;
    point.test_loss = eval.loss;
    point.samples_per_second = rate;
    point.samples = result.samples;
    point.compute_seconds = train_seconds - exchange_seconds;
    point.exchange_seconds = exchange_seconds;
    if (spec.mixer) point.bytes_sent = spec.mixer->bytes_sent(), point.bytes_received = spec.mixer->bytes_received();
    loss_sum = 0.0, loss_count = 0;
    if (!result.time_to_target_seconds && spec.target_bpb > 0 && eval.bpb <= spec.target_bpb)
      result.time_to_target_seconds = point.wall_seconds;
    result.history.push_back(point);
    observer.on_eval(point);
  }
  result.steps = spec.steps;
  result.wall_seconds = seconds_since(start);
  result.train_seconds = result.wall_seconds - eval_seconds;
  result.model_checksum = checksum_hex(learner.model().params(), learner.model().param_count());
  return result;
}

}  // namespace starling
