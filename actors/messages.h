#pragma once
// The messages between the node actor and its learner actors, and the project's CAF type-ID
// block. Buffers travel as views: the node guarantees z is not written while learners read
// it, and a learner's reply points into buffers it owns until its next order.
#include "actors/node_spec.h"
#include "learners/replicas/sma.h"
#include "learners/replicas/sma_group.h"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/type_id.hpp>

#include <memory>
#include <optional>
#include <vector>

namespace starling::actors {

/// What a learner does until the node's next synchronization: one optimizer step per
/// learning rate in `lrs` (only one, a gradient, in `average` mode), so a node with nothing
/// to synchronize between iterations pays one message round per order, not per step.
struct StepOrder {
  IntraSync mode = IntraSync::sma;
  std::vector<float> lrs{0.f};
  bool sync = true;             // sma: report the replica for this iteration's averaging
  bool load = false;            // copy z into the replica first
  bool reset_optimizer = false;  // forget momentum (with load: a learning-rate drop)
  /// The node moved to where the running job is (it joined, or fell behind): the learner
  /// goes on from this step with fresh optimizer state (Learner::reposition).
  std::optional<int64_t> restart_at;
  const float* z = nullptr;
  /// sma with learners on threads of their own: the learners average among themselves after
  /// every step that ends an iteration i with (i + 1) % sync_every == 0, counting from
  /// `iteration`, and the node runs no round of its own.
  std::shared_ptr<sma::SmaGroup> group;
  int64_t iteration = 0;
  int sync_every = 1;
};

/// A learner's answer: its mean batch loss over the order's steps and the vector the node needs (its replica for SMA and
/// independent replicas, its gradient for synchronous SGD; null when nothing is combined).
struct StepReport {
  double loss = 0.0;
  float* vector = nullptr;  // lent to the node until the learner's next order
  double compute_seconds = 0.0;
};

/// One learner's share of an SMA round that the node runs (learners/replicas/sma.h).
using SmaSlice = sma::Slice;

/// Per-iteration figures for the metrics actor.
struct IterationStats {
  int64_t iteration = 0, total_iterations = 0;
  double epoch = 0.0, loss = 0.0, samples_per_second = 0.0;
  double compute_seconds = 0.0, imbalance_seconds = 0.0, sync_seconds = 0.0;
};

/// A learner lent to the node whole, between orders, to be checkpointed or restored: the
/// node may read and write it until it sends that learner its next order.
struct LearnerLoan {
  Learner* learner = nullptr;
};

using run_atom = caf::atom_constant<caf::atom("run")>;
/// To the metrics actor: answered once everything sent to it before has been handled.
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using lend_atom = caf::atom_constant<caf::atom("lend")>;

}  // namespace starling::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::StepOrder)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::StepReport)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::SmaSlice)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::IterationStats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::NodeResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::LearnerLoan)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::actors::NodeSnapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::EvalPoint)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(starling::TrainResult)

CAF_BEGIN_TYPE_ID_BLOCK(starling, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(starling, (starling::actors::StepOrder))
  CAF_ADD_TYPE_ID(starling, (starling::actors::StepReport))
  CAF_ADD_TYPE_ID(starling, (starling::actors::SmaSlice))
  CAF_ADD_TYPE_ID(starling, (starling::actors::IterationStats))
  CAF_ADD_TYPE_ID(starling, (starling::actors::NodeResult))
  CAF_ADD_TYPE_ID(starling, (starling::actors::LearnerLoan))
  CAF_ADD_TYPE_ID(starling, (starling::actors::NodeSnapshot))
  CAF_ADD_TYPE_ID(starling, (starling::EvalPoint))
  CAF_ADD_TYPE_ID(starling, (starling::TrainResult))
CAF_END_TYPE_ID_BLOCK(starling)
