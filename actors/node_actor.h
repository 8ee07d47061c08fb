#pragma once
// The node actor: owns the central model z and drives its learner actors one order at a
// time as its schedule plans it (node_schedule.h): orders out, reports in, combine, then the
// SMA round, exchange, evaluation or checkpoint that follows. It tunes the number of learners
// when asked to and answers `run` with the NodeResult when training ends. Its state is
// NodeState (node_state.h).
#include "actors/node_state.h"

#include <caf/stateful_actor.hpp>

#include <memory>
#include <string>

namespace starling::actors {

/// `resume`, when set, is a checkpoint that fits `spec` (node_fingerprint): the node
/// continues from it. `resumed_from` names its file for the result.
caf::behavior node_actor(caf::stateful_actor<NodeState>* self, NodeSpec spec, std::shared_ptr<const Task> task,
                         caf::actor metrics, std::shared_ptr<const Checkpoint> resume, std::string resumed_from);

}  // namespace starling::actors
