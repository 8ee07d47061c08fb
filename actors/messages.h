#pragma once
// The messages between the node actor and its learner actors, and the project's CAF type-ID
// block. Buffers travel as views: the node guarantees z is not written while learners read
// it, and a learner's reply points into buffers it owns until its next order.
#include "actors/node.h"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/type_id.hpp>

namespace starling::actors {

/// What a learner does this iteration.
struct StepOrder {
  IntraSync mode = IntraSync::sma;
  float lr = 0.f;
  float alpha = 0.f;
  bool sync = true;             // sma: compute and apply the correction this iteration
  bool load = false;            // copy z into the replica first
  bool reset_optimizer = false;  // forget momentum (with load: a learning-rate drop)
  const float* z = nullptr;
};

/// A learner's answer: its batch loss and the vector the node needs (correction, gradient
/// or replica, by mode; null when there is nothing to combine).
struct StepReport {
  double loss = 0.0;
  const float* vector = nullptr;
  double compute_seconds = 0.0;
};

/// Per-iteration figures for the metrics actor.
struct IterationStats {
  int64_t iteration = 0, total_iterations = 0;
  double epoch = 0.0, loss = 0.0, samples_per_second = 0.0;
  double compute_seconds = 0.0, imbalance_seconds = 0.0, sync_seconds = 0.0;
};

/// The metrics actor's totals, for the node's result.
struct TimeSplit {
  double compute_seconds = 0.0, imbalance_seconds = 0.0, sync_seconds = 0.0;
};

using run_atom = caf::atom_constant<caf::atom("run")>;
using summary_atom = caf::atom_constant<caf::atom("summary")>;

}  // namespace starling::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::StepOrder)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::StepReport)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::IterationStats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::NodeResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::TimeSplit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::EvalPoint)

CAF_BEGIN_TYPE_ID_BLOCK(starling, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(starling, (starling::actors::StepOrder))
  CAF_ADD_TYPE_ID(starling, (starling::actors::StepReport))
  CAF_ADD_TYPE_ID(starling, (starling::actors::IterationStats))
  CAF_ADD_TYPE_ID(starling, (starling::actors::NodeResult))
  CAF_ADD_TYPE_ID(starling, (starling::actors::TimeSplit))
  CAF_ADD_TYPE_ID(starling, (starling::EvalPoint))
CAF_END_TYPE_ID_BLOCK(starling)
