#pragma once
// A node: several learner actors (Crossbow-style small-batch replicas) kept together by
// synchronous model averaging around the node's central model z, on CAF, for any task
// (learners/tasks/task.h: image classification, language modelling). This header is the CAF-free
// entry point that the CLI calls; actors/node_spec.h holds what it is asked and answers.
#include "actors/node_spec.h"
#include "learners/tasks/task.h"

#include <memory>
#include <string>

namespace starling::actors {

/// Learners in lockstep rounds (sma, average) that do not share the cores evenly leave some
/// cores idle in every round, since a step is never split between cores: a sentence for the
/// log saying so and what it costs; empty when every core runs as many learners.
std::string uneven_learners_note(int learners, int cores, IntraSync mode);

/// Trains on `task` (this peer's data) on an actor system of its own; throws
/// std::invalid_argument on a model or learner count the task's data rules out,
/// std::runtime_error naming the learner when one fails or why the peers cannot go on (too
/// few left: the node then writes a checkpoint first, when it has a checkpoint folder),
/// CheckpointMismatch when asked to resume from another run's checkpoint, and
/// CheckpointError when the checkpoint folder cannot be made.
NodeResult run_node(const NodeSpec& spec, std::shared_ptr<const Task> task, TrainObserver& observer);

}  // namespace starling::actors
