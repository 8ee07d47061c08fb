#pragma once
// What the node reports, from its state: an order's figures for the progress line, an
// evaluation as a metrics point, and the NodeResult that answers `run`. The totals these
// read (RunTotals, TrainResult) are kept here too; the node actor only sends the results.
#include "actors/node_state.h"

#include <vector>

namespace starling::actors {

double seconds_since(Clock::time_point t);

/// Folds the order just completed (its reports, the schedule's counters already past it)
/// into the totals: the slowest and the mean learner's compute, the node's own wait and the
/// training loss.
IterationStats account_order(NodeState& s);

/// The evaluation of z just made, as the metrics' point; starts the next training-loss mean
/// and records the point in the history and the time to target.
EvalPoint record_evaluation(NodeState& s, const Evaluation& eval);

/// The node and its peers now, for a monitor (NodeSpec::on_snapshot); `final` after goodbye.
/// The peers' part is left out while a mix runs beside the learners (NodePeers::mix_in_flight).
NodeSnapshot node_snapshot(NodeState& s, bool final);

/// Whether a monitor waits for a snapshot and the last one is older than spec.snapshot_every.
bool snapshot_due(const NodeState& s);

/// The run's result, when training ends; `learners` are the learners' specs, in index order.
NodeResult node_result(NodeState& s, const std::vector<LearnerSpec>& learners);

}  // namespace starling::actors
