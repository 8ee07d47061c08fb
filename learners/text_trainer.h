#pragma once
// The training loop of a language model on one node: `steps` steps of the node's learners
// (learners/text_learners.h: one, or several kept together by SMA) on the schedule, a
// validation of the central model every `eval_steps` and at the end, progress and metrics
// to an observer, and checkpoints (learners/checkpoint.h) it can resume from: the central
// model as section "central" under fingerprint "model" (what `starling generate` reads),
// every learner with its AdamW moments, the run's counters and the evaluation history, and
// as a peer what the ModelMixer saves (its exchange's state; restored before it starts). A
// step is one step of every learner: it trains on learners × batch windows. Its EvalPoints
// carry the validation loss (nats per byte) as test_loss; bits per byte is
// bits_per_byte(test_loss), and test_accuracy is unused.
// A peer that joins a running job, or that an exchange moves to where the job is, goes on
// from the job's step with its model (TextLearners::reposition: fresh moments).
// As a peer of a job, a ModelMixer mixes the central model with the other peers' every
// `period` steps and after the last, before that step's validation; the replicas are not
// reset to it, SMA pulls them there. A mixer may mix beside the next steps (overlapped):
// the mix after the last step is strict, one still in flight is settled `overlap_steps`
// after its mix (0: at the next), and before a checkpoint is written, so that the
// checkpoint holds a model and exchange state at rest.
#include "learners/schedule.h"
#include "learners/checkpoint.h"
#include "learners/text_learner.h"
#include "learners/text_learners.h"
#include "learners/trainer.h"

#include <functional>
#include <optional>
#include <string>

namespace starling {

/// A peer's exchange with the others, as the text loop drives it.
class ModelMixer {
 public:
  virtual ~ModelMixer() = default;
  /// Once, before the first step, with the model every mix() then works on in place. A peer
  /// that joins a running job gets the job's model there, and the job's step to go on from.
  virtual std::optional<int64_t> start(Model& model) = 0;
  /// Mixes the model after `step` steps; `compute_seconds` is the training time since the last
  /// mix. With `strict`, the model is mixed when mix() returns; otherwise an overlapping mixer
  /// may apply this mix at a later call. When a mix moved this peer (it was left out of the
  /// job and taken back, or fell behind), the model is the job's and the job's step returns.
  virtual std::optional<int64_t> mix(int64_t step, double compute_seconds, bool strict) = 0;
  /// Applies a mix still in flight, if any; moves this peer as mix() may.
  virtual std::optional<int64_t> settle() { return std::nullopt; }
  virtual uint64_t bytes_sent() const = 0;
  virtual uint64_t bytes_received() const = 0;
  /// Exchange time spent inside the steps rather than in mix() (a gradient all-reduce's).
  virtual double seconds_in_steps() const { return 0.0; }
  /// Its own state (the exchange algorithm's beyond the model) into a checkpoint.
  virtual void save(Checkpoint&) const {}
  /// Before start(): the run resumes after `step` steps from checkpoint `c` of `model`.
  virtual void resume(const Checkpoint& c, const Model& model, int64_t step) { (void)c, (void)model, (void)step; }
};

struct TextTrainSpec {
  TextLearnerSpec learner;  // every learner's; each draws its own windows
  TextSmaSpec sma;          // how many learners, and how SMA keeps them together
  ScheduleSpec schedule;
  int64_t steps = 1;
  int64_t eval_steps = 0;  // 0: only at the end
  double target_bpb = 0.0;
  std::string checkpoint_dir;    // empty: no checkpoints
  int64_t checkpoint_every = 0;  // steps between checkpoints; 0: only the last step's
  int checkpoint_keep = 3;
  bool resume = false;           // continue from the newest checkpoint in checkpoint_dir, if any
  std::function<void(const std::string&)> warn = [](const std::string&) {};  // an unusable checkpoint skipped
  ModelMixer* mixer = nullptr;  // null: one node alone
  int64_t period = 1;           // steps between mixes
  int64_t overlap_steps = 0;    // steps after a mix when an overlapping mixer's lands; 0: at the next mix
};

/// Runs the whole training on `part` of `corpus`, validating on its validation windows;
/// samples count windows. Throws std::invalid_argument on an impossible spec.
/// On resume, CheckpointMismatch when the newest valid checkpoint is of another run.
TrainResult train_text(const TextTrainSpec& spec, const TextCorpus& corpus, const TextPart& part, TrainObserver& observer);

/// What a text run's checkpoint must match: the model (kind and layer signature), the
/// learner count, the optimizer, batch and steps.
Fingerprint text_fingerprint(const TextTrainSpec& spec, const Model& model);

}  // namespace starling
