#pragma once
// The node actor: owns the central model z, drives its learner actors one synchronous
// iteration at a time (orders out, reports in, combine), evaluates z, tunes the number of
// learners when asked to, and answers `run` with the NodeResult when training ends.
#include "actors/messages.h"
#include "actors/node_schedule.h"
#include "gossip/overlapped_exchange.h"
#include "gossip/peer_exchange.h"
#include "learners/checkpoint.h"
#include "learners/model.h"
#include "learners/optimizer.h"

#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace starling::actors {

using Clock = std::chrono::steady_clock;

/// Crossbow's auto-tuning: grow while each added learner raises throughput by more than
/// the threshold; otherwise drop the last one and stop.
struct Autotune {
  bool active = false;
  Clock::time_point window_start;
  int64_t window_samples = 0, window_iterations = 0;
  double best_rate = 0.0;
};

struct NodeState {
  NodeSpec spec;
  Dataset train, test;
  caf::actor metrics;
  std::vector<caf::actor> learners;
  std::unique_ptr<Model> central;  // z is central->params()
  AlignedBuffer<float> z_prev, scratch;
  std::unique_ptr<Optimizer> optimizer;  // the shared model's, in `average` mode
  NodeSchedule schedule;  // the counters, and what the next order is
  std::vector<StepReport> reports;
  int pending = 0;
  bool load_next = true;  // replicas take z at the next order
  bool z_stale = false;   // independent replicas have moved since z was last their mean
  /// The learners' own SMA rounds (learners on threads of their own); null: the node runs them.
  std::shared_ptr<sma::SmaGroup> group;

  double loss_sum = 0.0;
  int64_t loss_count = 0;
  Clock::time_point start, iteration_start;
  double eval_seconds = 0.0;
  TrainResult result;
  caf::response_promise done;
  Autotune autotune;
  std::vector<std::string> autotune_log;
  std::unique_ptr<gossip::PeerExchange> strict_exchange;  // mixes z itself while the learners wait
  std::unique_ptr<gossip::OverlappedExchange> overlap;   // or snapshots of z beside their steps
  gossip::PeerExchange* exchange = nullptr;  // the one of the two in use; null for a single node
  std::string startup_error;  // why the node cannot train, found while it was set up
  double exchange_seconds = 0.0;  // the node's time in the exchange (overlapped: only its wait)
  double compute_seconds = 0.0, wait_seconds = 0.0;  // totals for the metrics, see EvalPoint
  std::optional<double> consensus_distance;         // of the last measured exchange
  AlignedBuffer<float> z_before;                    // z before a measured exchange
  double compute_since_exchange = 0.0;  // the slowest learner's compute since the last exchange
  double mean_compute_seconds = 0.0;    // the mean learner's compute, summed over iterations
  uint64_t exchanges = 0;               // rounds completed so far: the peers' round counter
  uint64_t bytes_sent_before = 0, bytes_received_before = 0;  // by the run a checkpoint continues
  std::shared_ptr<const Checkpoint> resume;  // put back into the learners when `run` arrives
  std::string resumed_from;  // its file
  int64_t resumed_from_step = 0;
  std::vector<Learner*> loans;  // learners lent for a checkpoint, see LearnerLoan
  std::optional<int64_t> joined_at_step;  // a peer that joined a running job: where
  static inline const char* name = "starling.node";
};

/// `resume`, when set, is a checkpoint that fits `spec` (node_fingerprint): the node
/// continues from it. `resumed_from` names its file for the result.
caf::behavior node_actor(caf::stateful_actor<NodeState>* self, NodeSpec spec, Dataset train, Dataset test,
                         caf::actor metrics, std::shared_ptr<const Checkpoint> resume, std::string resumed_from);

}  // namespace starling::actors
