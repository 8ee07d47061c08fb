#include "actors/metrics_actor.h"

#include <caf/all.hpp>

namespace starling::actors {

caf::behavior metrics_actor(caf::stateful_actor<MetricsState>* self, TrainObserver* observer) {
  self->state.observer = observer;
  return {
      [=](const IterationStats& s) {
        auto& t = self->state.totals;
        t.compute_seconds += s.compute_seconds;
        t.imbalance_seconds += s.imbalance_seconds;
        t.sync_seconds += s.sync_seconds;
        self->state.observer->on_step(s.iteration, s.total_iterations, s.epoch, s.loss, s.samples_per_second);
      },
      [=](const EvalPoint& point) { self->state.observer->on_eval(point); },
      [=](summary_atom) { return self->state.totals; },
  };
}

}  // namespace starling::actors
