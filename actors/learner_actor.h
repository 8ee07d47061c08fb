#pragma once
// The learner actor: owns one replica (model, optimizer state, data shard, buffers),
// answers each StepOrder with a StepReport and each SmaSlice by averaging that slice, and
// lends itself whole (LearnerLoan) for checkpoints. A failure (an exception, a non-finite
// loss) comes back as an error naming the learner, never as a silent loss.
#include "actors/messages.h"
#include "learners/replicas/learner.h"

#include <caf/stateful_actor.hpp>

#include <memory>

namespace starling::actors {

struct LearnerState {
  int index = 0;
  std::unique_ptr<Learner> learner;
  double slowdown = 1.0;  // NodeSpec::slowdown
  static inline const char* name = "starling.learner";
};

caf::behavior learner_actor(caf::stateful_actor<LearnerState>* self, int index, LearnerSpec spec,
                           std::shared_ptr<const Task> task, double slowdown);

/// The learner's side of one iteration, without CAF (also used by tests); with
/// state.slowdown > 1 it then sleeps, the sleep counted in the report's compute time.
StepReport run_step(LearnerState& state, const StepOrder& order);

}  // namespace starling::actors
