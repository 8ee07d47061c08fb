#pragma once
// A fixed learner count that is slower than one learner: at start, a node of k >= 2 learners
// times k scratch replicas stepping concurrently on threads of their own, each iteration
// followed by the SMA round they run among themselves (sma::SmaGroup), against one replica
// stepping alone, and warns when k learners deliver fewer samples/s than one. Interleaved
// rounds and medians, as backend_choice.h does; well under a second. The judgement is a pure
// function of the timings, so that it is tested without a clock.
#include "actors/node_spec.h"

#include <string>
#include <vector>

namespace starling::actors {

/// Wall seconds per iteration, one entry per timed round of a few iterations, the rounds of
/// one learner and of k interleaved (none of the three empty when judged).
struct LearnerTimings {
  std::vector<double> one_step;    // one learner's step, alone
  std::vector<double> group_step;  // the slowest of k concurrent steps, started together
  std::vector<double> group_round; // the SMA round after them, until every slice is done
};

struct LearnerCost {
  double speedup = 1.0;  // k learners' samples/s over one learner's
  std::string note;      // the warning for the log; empty when k learners are not slower
};

/// From the medians: k · one_step / (group_step + group_round / sync_every), the round left
/// out for independent replicas (mode none).
LearnerCost judge_learners(int learners, IntraSync mode, int sync_every, const LearnerTimings& timings);

/// Times spec.learners replicas of spec.train.learner as described above, for up to
/// `budget_seconds` of timed work or 7 rounds of 8 iterations each. Rounds run for
/// IntraSync::sma even with sync_every > 1, since their cost is then divided by it.
LearnerTimings time_learners(const NodeSpec& spec, const std::shared_ptr<const Task>& task, double budget_seconds = 0.25);

/// Whether a node with `spec` is timed at start: a fixed count of at least two learners on
/// threads of their own, kept together by SMA or not at all (synchronous SGD's rounds are
/// the node's, not timed here).
bool worth_timing(const NodeSpec& spec);

}  // namespace starling::actors
