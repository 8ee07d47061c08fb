#include "actors/metrics_actor.h"

#include <caf/all.hpp>

namespace starling::actors {

caf::behavior metrics_actor(caf::stateful_actor<MetricsState>* self, TrainObserver* observer,
                            std::function<void(const NodeSnapshot&)> on_snapshot) {
  self->state.observer = observer;
  self->state.on_snapshot = std::move(on_snapshot);
  return {
      [=](const IterationStats& s) {
        self->state.observer->on_step(s.iteration, s.total_iterations, s.epoch, s.loss, s.samples_per_second);
      },
      [=](const EvalPoint& point) { self->state.observer->on_eval(point); },
      [=](const TrainResult& restored) { self->state.observer->on_resume(restored); },
      [=](const NodeSnapshot& snapshot) {
        if (self->state.on_snapshot) self->state.on_snapshot(snapshot);
      },
      [=](flush_atom) { return true; },
  };
}

}  // namespace starling::actors
