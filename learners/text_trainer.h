#pragma once
// The training loop of a language model on one node, one learner: `steps` steps of a
// TextLearner on the schedule, a validation every `eval_steps` and at the end, progress and
// metrics to an observer. Its EvalPoints carry the validation loss (nats per byte) as
// test_loss; bits per byte is bits_per_byte(test_loss), and test_accuracy is unused.
#include "learners/schedule.h"
#include "learners/text_learner.h"
#include "learners/trainer.h"

namespace starling {

struct TextTrainSpec {
  TextLearnerSpec learner;
  ScheduleSpec schedule;
  int64_t steps = 1;
  int64_t eval_steps = 0;  // 0: only at the end
  double target_bpb = 0.0;
};

/// Runs the whole training on `part` of `corpus`, validating on its validation windows;
/// samples count windows. Throws std::invalid_argument on an impossible spec.
TrainResult train_text(const TextTrainSpec& spec, const TextCorpus& corpus, const TextPart& part, TrainObserver& observer);

}  // namespace starling
