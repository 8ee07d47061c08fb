#pragma once
// The node actor's state (node_actor.h), in parts: the schedule (node_schedule.h), the run's
// totals, the peers (node_exchange.h), the resume point and the learner-count tuning. The
// node's checkpoint, report and exchange are plain functions on it.
#include "actors/learner_tuner.h"
#include "actors/messages.h"
#include "actors/node_exchange.h"
#include "actors/node_schedule.h"
#include "learners/checkpoints/checkpoint.h"
#include "learners/models/model.h"
#include "learners/optimizers/optimizer.h"

#include <caf/actor.hpp>
#include <caf/response_promise.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace starling::actors {

using Clock = std::chrono::steady_clock;

/// node.learners = "auto": the tuner's decisions (learner_tuner.h) and the window over which
/// the node measures its current trial's samples/s.
struct Autotune {
  LearnerTuner tuner;  // inactive with a fixed learner count
  Clock::time_point window_start;
  int64_t window_samples = 0, window_iterations = 0;
  double window_eval_seconds = 0.0;  // RunTotals::eval_seconds when the window began
};

/// The run's clock and the totals the metrics report (see EvalPoint): times, and the
/// training loss since the last evaluation.
struct RunTotals {
  Clock::time_point start;        // of the run; a resumed run's lies back by the checkpoint's time
  Clock::time_point order_start;  // of the order in flight
  double eval_seconds = 0.0;
  double exchange_seconds = 0.0;      // the node's time in the exchange (overlapped: only its wait)
  double compute_seconds = 0.0;       // the slowest learner's, summed over orders
  double mean_compute_seconds = 0.0;  // the mean learner's, summed over orders
  double wait_seconds = 0.0;          // the node's own part of the orders
  double loss_sum = 0.0;              // over the steps since the last evaluation
  int64_t loss_count = 0;
  IterationStats last_order;          // the figures of the last order completed
  Clock::time_point last_snapshot;    // when the monitor was last sent a NodeSnapshot
};

/// The checkpoint a resumed node continues from: its node part goes back at set-up, its
/// learners' parts when `run` arrives.
struct ResumePoint {
  std::shared_ptr<const Checkpoint> checkpoint;  // null once the learners have theirs back
  std::string file;
  int64_t step = 0;
  std::optional<gossip::AlgorithmState> exchange;  // the exchange algorithm's, for the exchange to take up
};

struct NodeState {
  NodeSpec spec;
  std::shared_ptr<const Task> task;  // this peer's data, and how its model is judged
  caf::actor metrics;

  std::unique_ptr<Model> central;  // z is central->params()
  AlignedBuffer<float> z_prev;
  AlignedBuffer<float> scratch;          // `average` mode: the learners' mean gradient
  /// The shared model's, made at `average` mode's first step (shared_optimizer): an SMA run
  /// never holds its slots, two more copies of the model for AdamW.
  std::unique_ptr<Optimizer> optimizer;

  std::vector<caf::actor> learners;
  int replies_due = 0;              // learners yet to answer an order, an SMA slice or a loan
  std::vector<StepReport> reports;  // to the order in flight
  std::vector<Learner*> loans;      // learners lent for a checkpoint, see LearnerLoan
  bool load_next = true;            // replicas take z at the next order
  bool z_stale = false;             // independent replicas have moved since z was last their mean
  bool restart_learners = false;    // the node moved to the running job's step: so do its learners
  /// The learners' own SMA rounds (learners on threads of their own); null: the node runs them.
  std::shared_ptr<sma::SmaGroup> group;

  NodeSchedule schedule;  // the counters, and what the next order is
  RunTotals totals;
  NodePeers peers;
  ResumePoint resume;
  Autotune autotune;
  TrainResult result;  // the evaluation history and time to target
  caf::response_promise done;
  std::string startup_error;  // why the node cannot train, found while it was set up
  static inline const char* name = "starling.node";
};

/// The shared model's optimizer, made on first use.
Optimizer& shared_optimizer(NodeState& s);

}  // namespace starling::actors
