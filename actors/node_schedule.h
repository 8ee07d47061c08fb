#pragma once
// The node's schedule: its counters (iterations and samples done, the next evaluation point,
// the learning rate) and the one decision they drive, NodeSchedule::plan: how many
// iterations the next order covers and what follows it, an SMA round run by the node, an
// exchange with the peers, an evaluation, a checkpoint or the end. No actors, no sockets:
// the node actor carries a plan out, and its counters change only through this class.
#include "actors/node_spec.h"
#include "learners/optimizers/schedule.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace starling::actors {

/// What an exchange point does; with the exchange beside the compute, once the mix in
/// flight has arrived.
enum class Then {
  overlap,  // begins the next mix beside the learners' steps (strict exchange: mixes z now)
  strict,   // mixes z now, waited for: after the last iteration and at a checkpoint
  rest,     // nothing but landing the mix in flight: at a checkpoint between exchange points,
            // or overlap_steps past the last exchange point
};

/// Who runs the SMA rounds of an order.
enum class SmaRounds {
  none,           // none in this order (no SMA, or the order ends between rounds)
  by_node,        // one, after the order: the node hands every learner a slice
  among_learners  // every sync_every iterations, inside the order (sma::SmaGroup)
};

/// One order to the learners and what follows it, in the order the node does it: the
/// order, its SMA round, the exchange point, the evaluation, then the end or a checkpoint.
struct OrderPlan {
  int64_t step = 0;                 // the learning-rate schedule's step of its first iteration
  int64_t steps = 0;                // iterations it covers; 0: nothing planned yet
  IntraSync mode = IntraSync::sma;  // how the learners' work is combined (SMA of one learner is none)
  bool lr_drop = false;             // the rate drops at its first step: replicas restart from z
                                    // and forget their momentum
  SmaRounds sma = SmaRounds::none;
  std::optional<Then> exchange;  // an exchange point after it, and what that does
  bool evaluate = false;         // z is evaluated after it (the exchange before measures its
                                 // consensus distance)
  bool last = false;             // training ends after it
  bool checkpoint = false;       // a checkpoint follows it: every checkpoint_every iterations
                                 // and, with checkpoints on, after the last (the model the run
                                 // ends with, which `starling generate` reads)
};

/// The counters a checkpoint keeps (actors/node_checkpoint.h).
struct ScheduleCounters {
  int64_t iteration = 0, samples = 0, next_eval_samples = 0;
  double lr = 0.0;  // the rate of the last iteration ordered
};

class NodeSchedule {
 public:
  /// An order covers at most this many iterations: the node's progress line and its
  /// auto-tuning window need news now and then.
  static constexpr int64_t kMaxOrderSteps = 64;
  /// While tuning, at most this many: the tuner's window ends between orders, and its trials
  /// must run as the chosen configuration will (an order per step would time the messages).
  static constexpr int64_t kTuningOrderSteps = 8;

  /// Empty, for the actor's state; assign a real one before use.
  NodeSchedule() = default;
  /// `epoch_samples`: this peer's epoch (its share of the training set). Call set_learners
  /// before planning.
  NodeSchedule(const NodeSpec& spec, int64_t epoch_samples);

  /// The learner count changed: a node iteration is `learners` batches, and the learning
  /// rate schedule is rebuilt so that an epoch is still an epoch.
  void set_learners(int learners);
  /// How the learners are kept together from the next order on (the auto-tuner's trials).
  void set_averaging(IntraSync mode, int sync_every);
  IntraSync intra_sync() const { return intra_sync_; }
  int sync_every() const { return static_cast<int>(sync_every_); }

  /// Plans the next order from the counters and makes it the current one. `tuning`: the
  /// learners are being auto-tuned, at most kTuningOrderSteps iterations per order.
  /// `mix_in_flight`: a mix begun beside the compute at the last exchange point has not
  /// landed yet.
  const OrderPlan& plan(bool tuning, bool mix_in_flight);
  const OrderPlan& current() const { return plan_; }
  /// The current order's learning rates, one per iteration.
  std::vector<float> learning_rates() const;

  /// The current order is done: its iterations and samples count (once; a repeated call
  /// changes nothing).
  void complete_order();
  /// z was evaluated: the next evaluation point moves past the samples done.
  void evaluated();
  /// The node goes on from the running job's iteration `at` (it joined the job, or fell
  /// behind and was moved): an order not yet completed completes at `at`, and what follows
  /// it is decided again from there (no evaluation until the next point); between orders
  /// the counters are at `at`.
  void reposition(int64_t at);
  /// Counters from a checkpoint, checked by the caller against target_samples().
  void restore(const ScheduleCounters& counters);
  ScheduleCounters counters() const;

  int64_t iteration() const { return iteration_; }
  int64_t samples() const { return samples_; }
  int64_t target_samples() const { return target_samples_; }
  int64_t samples_per_iteration() const { return per_iteration_; }
  /// The learning-rate schedule's step: iterations of the current learner count so far.
  int64_t step() const { return samples_ / per_iteration_; }
  int64_t total_steps() const { return target_samples_ / per_iteration_; }
  /// Iterations of the current learner count until the target.
  int64_t iterations_left() const {
    return std::max<int64_t>(0, (target_samples_ - samples_ + per_iteration_ - 1) / per_iteration_);
  }
  int64_t epoch_samples() const { return epoch_samples_; }
  double epoch() const { return static_cast<double>(samples_) / epoch_samples_; }
  /// The rate of the last iteration ordered (with synchronous SGD, the order's only one).
  double lr() const { return lr_; }

 private:
  int64_t order_steps(IntraSync mode, bool tuning, bool mix_in_flight) const;
  SmaRounds sma_rounds() const;
  void decide_what_follows();
  std::optional<Then> exchange_point(bool mix_in_flight) const;
  bool lands_after(int64_t iterations) const;
  int64_t until_samples(int64_t samples) const;
  // Iterations until the count is `offset` past a multiple of `every`, at least one.
  int64_t until_offset(int64_t every, int64_t offset) const { return (offset - iteration_ % every + every - 1) % every + 1; }
  int64_t until_multiple(int64_t every) const { return until_offset(every, 0); }

  ScheduleSpec rate_spec_;
  int64_t batch_ = 1;  // samples per learner and iteration
  IntraSync intra_sync_ = IntraSync::sma;
  bool learners_average_ = true;  // SMA rounds among the learners (NodeSpec::detached_learners)
  int64_t sync_every_ = 1, checkpoint_every_ = 0;
  int64_t epoch_samples_ = 1, target_samples_ = 1, eval_interval_ = 1;
  int64_t exchange_period_ = 0;  // 0: no peers
  int64_t overlap_steps_ = 0;    // a mix in flight lands this far past its exchange point; 0: at the next
  int learners_ = 1;
  int64_t per_iteration_ = 1;  // samples per node iteration
  std::optional<Schedule> rates_;
  int64_t iteration_ = 0, samples_ = 0, next_eval_samples_ = 1;
  double lr_ = 0.0;
  OrderPlan plan_;
  bool in_progress_ = false;  // plan_ is planned and not yet completed
};

}  // namespace starling::actors
