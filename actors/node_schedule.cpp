#include "actors/node_schedule.h"

#include <algorithm>
#include <cmath>

namespace starling::actors {

NodeSchedule::NodeSchedule(const NodeSpec& spec, int64_t epoch_samples)
    : rate_spec_(spec.train.schedule),
      batch_(spec.train.learner.batch),
      intra_sync_(spec.intra_sync),
      learners_average_(spec.detached_learners),
      sync_every_(spec.sync_every),
      checkpoint_every_(spec.checkpoint_every),
      epoch_samples_(std::max<int64_t>(1, epoch_samples)),
      target_samples_(spec.train.samples > 0
                          ? spec.train.samples
                          : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(spec.train.epochs * epoch_samples_)))),
      eval_interval_(spec.train.eval_samples > 0
                         ? spec.train.eval_samples
                         : std::max<int64_t>(1, static_cast<int64_t>(spec.train.eval_every * epoch_samples_))),
      // Peers that average gradients do so inside every iteration, and never mix models.
      exchange_period_(spec.exchange.mode == gossip::ExchangeMode::none || spec.average_gradients ? 0 : spec.period),
      overlap_steps_(spec.overlap && exchange_period_ > 0 ? spec.overlap_steps : 0),
      next_eval_samples_(eval_interval_) {}

void NodeSchedule::set_learners(int learners) {
  learners_ = learners;
  per_iteration_ = learners * batch_;
  const int64_t per_epoch = std::max<int64_t>(1, epoch_samples_ / per_iteration_);
  rates_.emplace(rate_spec_, per_epoch, std::max<int64_t>(1, target_samples_ / per_iteration_));
}

void NodeSchedule::set_averaging(IntraSync mode, int sync_every) {
  intra_sync_ = mode;
  sync_every_ = std::max(1, sync_every);
}

const OrderPlan& NodeSchedule::plan(bool tuning, bool mix_in_flight) {
  plan_ = OrderPlan{};
  // A single replica has nobody to be averaged with: it is the central model.
  plan_.mode = learners_ == 1 && intra_sync_ == IntraSync::sma ? IntraSync::none : intra_sync_;
  plan_.step = step();
  plan_.steps = order_steps(plan_.mode, tuning, mix_in_flight);
  plan_.lr_drop = iteration_ > 0 && rates_->is_drop(plan_.step);
  plan_.sma = sma_rounds();
  lr_ = rates_->lr(plan_.step + plan_.steps - 1);
  decide_what_follows();
  plan_.exchange = exchange_point(mix_in_flight);
  in_progress_ = true;
  return plan_;
}

// Up to the next event the node must act on: an SMA round it runs, an evaluation, an
// exchange, a mix in flight to land, a checkpoint, a learning-rate drop (which must start an
// order), the end.
int64_t NodeSchedule::order_steps(IntraSync mode, bool tuning, bool mix_in_flight) const {
  if (mode == IntraSync::average) return 1;
  int64_t m = std::min({tuning ? kTuningOrderSteps : kMaxOrderSteps, until_samples(target_samples_), until_samples(next_eval_samples_)});
  if (mode == IntraSync::sma && !learners_average_) m = std::min(m, until_multiple(sync_every_));
  if (exchange_period_ > 0) m = std::min(m, until_multiple(exchange_period_));
  if (mix_in_flight && overlap_steps_ > 0) m = std::min(m, until_offset(exchange_period_, overlap_steps_));
  if (checkpoint_every_ > 0) m = std::min(m, until_multiple(checkpoint_every_));
  const int64_t first = step();
  for (int64_t i = 1; i < m; ++i)
    if (rates_->is_drop(first + i)) return i;
  return m;
}

SmaRounds NodeSchedule::sma_rounds() const {
  if (plan_.mode != IntraSync::sma) return SmaRounds::none;
  if (learners_average_) return SmaRounds::among_learners;
  return (iteration_ + plan_.steps) % sync_every_ == 0 ? SmaRounds::by_node : SmaRounds::none;
}

// The evaluation, the end and the checkpoint after the current order, from the counters as
// they stand before it.
void NodeSchedule::decide_what_follows() {
  const int64_t iteration = iteration_ + plan_.steps;
  plan_.last = samples_ + plan_.steps * per_iteration_ >= target_samples_;
  plan_.evaluate = plan_.last || samples_ + plan_.steps * per_iteration_ >= next_eval_samples_;
  plan_.checkpoint = checkpoint_every_ > 0 && (plan_.last || iteration % checkpoint_every_ == 0);
}

// The exchange point after the current order: every exchange period and after the last
// iteration. A checkpoint holds no mix in flight: the exchange at it is strict, and at one
// between exchange points the mix in flight lands first, as it does overlap_steps past its
// exchange point.
std::optional<Then> NodeSchedule::exchange_point(bool mix_in_flight) const {
  if (exchange_period_ > 0 && (plan_.last || (iteration_ + plan_.steps) % exchange_period_ == 0))
    return plan_.last || plan_.checkpoint ? Then::strict : Then::overlap;
  if (mix_in_flight && (plan_.checkpoint || lands_after(plan_.steps))) return Then::rest;
  return std::nullopt;
}

// Whether `iterations` from now is overlap_steps past an exchange point.
bool NodeSchedule::lands_after(int64_t iterations) const {
  return overlap_steps_ > 0 && (iteration_ + iterations) % exchange_period_ == overlap_steps_;
}

std::vector<float> NodeSchedule::learning_rates() const {
  std::vector<float> rates;
  for (int64_t i = 0; i < plan_.steps; ++i) rates.push_back(static_cast<float>(rates_->lr(plan_.step + i)));
  return rates;
}

void NodeSchedule::complete_order() {
  if (!in_progress_) return;
  in_progress_ = false;
  iteration_ += plan_.steps;
  samples_ += plan_.steps * per_iteration_;
}

void NodeSchedule::evaluated() {
  while (next_eval_samples_ <= samples_) next_eval_samples_ += eval_interval_;
}

void NodeSchedule::reposition(int64_t at) {
  iteration_ = in_progress_ ? at - plan_.steps : at;
  samples_ = iteration_ * per_iteration_;
  next_eval_samples_ = (at * per_iteration_ / eval_interval_ + 1) * eval_interval_;
  if (in_progress_) decide_what_follows();
}

void NodeSchedule::restore(const ScheduleCounters& c) {
  iteration_ = c.iteration, samples_ = c.samples, next_eval_samples_ = c.next_eval_samples, lr_ = c.lr;
}

ScheduleCounters NodeSchedule::counters() const { return {iteration_, samples_, next_eval_samples_, lr_}; }

// Iterations until `samples` are done, at least one.
int64_t NodeSchedule::until_samples(int64_t samples) const {
  return std::max<int64_t>(1, (samples - samples_ + per_iteration_ - 1) / per_iteration_);
}

}  // namespace starling::actors
