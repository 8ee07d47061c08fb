#pragma once
// The training loop of a language model on one node, one learner: `steps` steps of a
// TextLearner on the schedule, a validation every `eval_steps` and at the end, progress and
// metrics to an observer. Its EvalPoints carry the validation loss (nats per byte) as
// test_loss; bits per byte is bits_per_byte(test_loss), and test_accuracy is unused.
// As a peer of a job, a ModelMixer mixes the model with the other peers' every `period`
// steps and after the last, before that step's validation.
#include "learners/schedule.h"
#include "learners/text_learner.h"
#include "learners/trainer.h"

namespace starling {

/// A peer's exchange with the others, as the text loop drives it.
class ModelMixer {
 public:
  virtual ~ModelMixer() = default;
  /// Once, before the first step, with the model every mix() then works on in place.
  virtual void start(Model& model) = 0;
  /// Mixes the model after `step` steps; `compute_seconds` is the training time since the last mix.
  virtual void mix(int64_t step, double compute_seconds) = 0;
  virtual uint64_t bytes_sent() const = 0;
  virtual uint64_t bytes_received() const = 0;
};

struct TextTrainSpec {
  TextLearnerSpec learner;
  ScheduleSpec schedule;
  int64_t steps = 1;
  int64_t eval_steps = 0;  // 0: only at the end
  double target_bpb = 0.0;
  ModelMixer* mixer = nullptr;  // null: one node alone
  int64_t period = 1;           // steps between mixes
};

/// Runs the whole training on `part` of `corpus`, validating on its validation windows;
/// samples count windows. Throws std::invalid_argument on an impossible spec.
TrainResult train_text(const TextTrainSpec& spec, const TextCorpus& corpus, const TextPart& part, TrainObserver& observer);

}  // namespace starling
