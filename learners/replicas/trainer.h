#pragma once
// What a run is (its length, evaluations and target, in any task) and what it reports, and
// the plain single-learner loop on an image set that the node's tests follow: steps on the
// schedule, evaluation every eval_every epochs, progress and metrics to an observer.
#include "learners/data/dataset.h"
#include "learners/optimizers/schedule.h"
#include "learners/replicas/learner.h"

#include <optional>
#include <string>
#include <vector>

namespace starling {

struct TrainSpec {
  LearnerSpec learner;
  ScheduleSpec schedule;
  double epochs = 1.0;
  double eval_every = 1.0;  // in epochs
  /// In samples, in place of the two above when set: the run's length, and the samples
  /// between evaluations (a language model's run counts steps of batches, not epochs).
  int64_t samples = 0, eval_samples = 0;
  double target = 0.0;  // of the task's metric (Task::reached); 0: none
};

struct EvalPoint {
  int64_t step = 0;
  double epoch = 0.0;
  double wall_seconds = 0.0;
  double train_loss = 0.0;  // mean over the steps since the previous point
  double test_accuracy = 0.0;
  double test_loss = 0.0;
  double samples_per_second = 0.0;  // training samples over training time so far
  int64_t samples = 0;              // training samples so far (this node's)

  // Where the time went and what crossed the network, cumulative to this point; a node
  // that trains alone leaves the network fields at zero.
  double compute_seconds = 0.0;   // learners' forward/backward/update (the slowest learner's)
  double exchange_seconds = 0.0;  // mixing with the other peers (overlapped: waiting for the mix)
  double wait_seconds = 0.0;      // inside the node: waiting for learners, averaging, messaging
  uint64_t bytes_sent = 0, bytes_received = 0;
  /// ‖z_after − z_before‖ / ‖z_after‖ of the exchange just before this point: for
  /// all-reduce the peer's distance from the mean of all peers, for gossip from its
  /// weighted neighbourhood (an overlapped exchange: of the mix that arrived there, from
  /// its snapshot). Empty when no exchange preceded the point.
  std::optional<double> consensus_distance;
  std::optional<double> staleness;  // async gossip: mean step gap of the exchanges so far
};

struct TrainResult {
  std::vector<EvalPoint> history;
  int64_t steps = 0;
  int64_t samples = 0;
  double wall_seconds = 0.0;
  double train_seconds = 0.0;  // wall time less evaluation
  std::optional<double> time_to_target_seconds;
  std::string model_checksum;
  std::optional<int64_t> resumed_from_step;  // the checkpoint's step, when the run resumed from one
  std::optional<int64_t> joined_at_step;     // a peer that joined a running job: the job's step it went on from
  const EvalPoint& last() const { return history.back(); }
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void on_step(int64_t /*step*/, int64_t /*total_steps*/, double /*epoch*/, double /*loss*/,
                       double /*samples_per_second*/) {}
  virtual void on_eval(const EvalPoint& /*point*/) {}
  /// A run resumed from a checkpoint: `restored` is the result so far (evaluations included),
  /// so that the observer can continue its records rather than start them over.
  virtual void on_resume(const TrainResult& /*restored*/) {}
};

/// Trains one learner on an image set for spec.epochs; throws std::invalid_argument on an
/// impossible spec.
TrainResult train(const TrainSpec& spec, const Dataset& train_data, const Dataset& test_data, TrainObserver& observer);

}  // namespace starling
