#include "learners/text_trainer.h"

#include "learners/history_section.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

namespace starling {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What a checkpoint holds beyond the learners: the counters and clocks of the run so far.
struct RunState {
  TrainResult result;
  double elapsed_seconds = 0.0, eval_seconds = 0.0;
};

Checkpoint capture(const TextTrainSpec& spec, TextLearners& learners, const RunState& run) {
  Checkpoint c;
  c.step = static_cast<uint64_t>(learners.steps());
  c.fingerprint = text_fingerprint(spec, learners.central());
  SectionWriter counters;
  counters.put(run.result.samples).put(run.elapsed_seconds).put(run.eval_seconds);
  put_optional(counters, run.result.time_to_target_seconds);
  c.add("text_run", counters.take());
  SectionWriter history;
  put_history(history, run.result.history);
  c.add("history", history.take());
  learners.save(c);
  if (spec.mixer) spec.mixer->save(c);
  return c;
}

RunState restore(const Checkpoint& c, TextLearners& learners) {
  RunState run;
  SectionReader counters = c.reader("text_run");
  run.result.samples = counters.get<int64_t>();
  run.elapsed_seconds = counters.get<double>(), run.eval_seconds = counters.get<double>();
  run.result.time_to_target_seconds = get_optional(counters);
  counters.finish();
  SectionReader history = c.reader("history");
  run.result.history = get_history(history);
  history.finish();
  learners.restore(c);
  if (run.result.samples < 0 || static_cast<uint64_t>(learners.steps()) != c.step)
    throw CheckpointError("section 'text_run': counters that do not match step " + std::to_string(c.step));
  return run;
}

// The validation of the central model after `step` steps: its loss, and the bytes the mixer has moved so far.
EvalPoint validate(Model& central, const TextTrainSpec& spec, const TextCorpus& corpus, int64_t step, double epoch) {
  EvalPoint point;
  point.step = step;
  point.epoch = epoch;
  point.test_loss = evaluate_text(central, spec.learner.backend, corpus).loss;
  if (spec.mixer) point.bytes_sent = spec.mixer->bytes_sent(), point.bytes_received = spec.mixer->bytes_received();
  return point;
}

}  // namespace

Fingerprint text_fingerprint(const TextTrainSpec& spec, const Model& model) {
  return {
      {"model", spec.learner.model.kind + " " + model.signature()},
      {"parameters", std::to_string(model.param_count())},
      {"learners", std::to_string(spec.sma.learners)},
      {"optimizer", spec.learner.optimizer.kind},
      {"batch", std::to_string(spec.learner.batch)},
      {"steps", std::to_string(spec.steps)},
  };
}

namespace {

// What follows step `done` of a run: an exchange point (a mix every period and after the
// last step), where an overlapped mix in flight lands, a validation, a checkpoint.
struct StepPoint {
  bool last = false, mix = false, lands = false, validate = false, checkpoint = false;
};

StepPoint point_after(const TextTrainSpec& spec, int64_t done) {
  StepPoint p;
  p.last = done == spec.steps;
  p.mix = spec.mixer && (done % spec.period == 0 || p.last);
  p.checkpoint = !spec.checkpoint_dir.empty() && ((spec.checkpoint_every > 0 && done % spec.checkpoint_every == 0) || p.last);
  p.lands = spec.mixer && (p.checkpoint || (spec.overlap_steps > 0 && done % spec.period == spec.overlap_steps));
  p.validate = p.last || (spec.eval_steps > 0 && done % spec.eval_steps == 0);
  return p;
}

}  // namespace

TrainResult train_text(const TextTrainSpec& spec, const TextCorpus& corpus, const TextPart& part, TrainObserver& observer) {
  if (spec.steps < 1) throw std::invalid_argument("text training: steps must be at least 1");
  if (spec.mixer && spec.period < 1) throw std::invalid_argument("text training: the exchange period must be at least 1");
  TextLearners learners(spec.learner, spec.sma, corpus, part);
  // An epoch is as many windows as the part offers starts, as nanoGPT counts them.
  const double windows_per_epoch = static_cast<double>(learners.window_starts());
  const int64_t windows_per_step = static_cast<int64_t>(spec.learner.batch) * learners.size();
  const int64_t per_epoch = std::max<int64_t>(1, static_cast<int64_t>(windows_per_epoch / windows_per_step));
  const Schedule schedule(spec.schedule, per_epoch, spec.steps);

  RunState run;
  if (spec.resume)
    if (auto found = find_newest_checkpoint(spec.checkpoint_dir, text_fingerprint(spec, learners.central()), spec.warn)) {
      run = restore(found->checkpoint, learners);
      run.result.resumed_from_step = learners.steps();
      if (spec.mixer) spec.mixer->resume(found->checkpoint, learners.central(), learners.steps());
      observer.on_resume(run.result);
    }
  TrainResult& result = run.result;
  double loss_sum = 0.0;
  int64_t loss_count = 0;
  // A peer that joined a running job, or that an exchange moved to where the job is, has the
  // job's model in z and goes on from the job's step.
  const auto go_on_from = [&](int64_t at) {
    learners.reposition(at);
    result.samples = at * windows_per_step;
    if (!result.joined_at_step) result.joined_at_step = at;
    loss_sum = 0.0, loss_count = 0;
  };
  if (spec.mixer)
    if (const auto at = spec.mixer->start(learners.central())) go_on_from(*at);
  // The clock continues from the checkpoint's elapsed time.
  const auto start = Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(run.elapsed_seconds));
  double exchange_seconds = 0.0, compute_at_mix = 0.0;
  // Exchange time: mix()'s, and what the mixer spent inside the steps (a gradient all-reduce).
  const auto exchanged = [&] { return exchange_seconds + (spec.mixer ? spec.mixer->seconds_in_steps() : 0.0); };
  // The exchange after step `done`, strict at the last step and at checkpoints; the job's
  // step when it moved this peer.
  const auto exchange = [&](int64_t done, const StepPoint& p) -> std::optional<int64_t> {
    const auto begin = Clock::now();
    const double computed = seconds_since(start) - run.eval_seconds - exchanged();
    const auto moved = p.mix ? spec.mixer->mix(done, computed - compute_at_mix, p.last || p.checkpoint) : spec.mixer->settle();
    if (p.mix) compute_at_mix = computed;
    exchange_seconds += seconds_since(begin);
    return moved;
  };
  for (int64_t step = learners.steps(); step < spec.steps; ++step) {
    loss_sum += learners.step(static_cast<float>(schedule.lr(step)));
    ++loss_count;
    result.samples += windows_per_step;
    StepPoint point = point_after(spec, step + 1);
    if (point.mix || point.lands)
      if (const auto at = exchange(step + 1, point)) {
        go_on_from(*at);
        step = *at - 1;
        point = point_after(spec, *at);
      }
    const double train_seconds = seconds_since(start) - run.eval_seconds;
    const double rate = result.samples / std::max(train_seconds, 1e-9);
    const double epoch = result.samples / windows_per_epoch;
    observer.on_step(step + 1, spec.steps, epoch, loss_count ? loss_sum / loss_count : 0.0, rate);
    if (point.validate) {
      const auto eval_start = Clock::now();
      EvalPoint evaluation = validate(learners.central(), spec, corpus, step + 1, epoch);
      run.eval_seconds += seconds_since(eval_start);
      evaluation.wall_seconds = seconds_since(start);
      evaluation.train_loss = loss_count ? loss_sum / loss_count : 0.0;
      evaluation.samples_per_second = rate;
      evaluation.samples = result.samples;
      evaluation.compute_seconds = train_seconds - exchanged();
      evaluation.exchange_seconds = exchanged();
      loss_sum = 0.0, loss_count = 0;
      if (!result.time_to_target_seconds && spec.target_bpb > 0 && bits_per_byte(evaluation.test_loss) <= spec.target_bpb)
        result.time_to_target_seconds = evaluation.wall_seconds;
      result.history.push_back(evaluation);
      observer.on_eval(evaluation);
    }
    if (point.checkpoint) {
      run.elapsed_seconds = seconds_since(start);
      write_checkpoint(spec.checkpoint_dir, capture(spec, learners, run), spec.checkpoint_keep);
    }
  }
  if (result.history.empty())  // joined at the job's last step: nothing left to train
    result.history.push_back(validate(learners.central(), spec, corpus, spec.steps, result.samples / windows_per_epoch));
  result.steps = spec.steps;
  result.wall_seconds = seconds_since(start);
  result.train_seconds = result.wall_seconds - run.eval_seconds;
  result.model_checksum = checksum_hex(learners.central().params(), learners.central().param_count());
  return result;
}

}  // namespace starling
