#pragma once
// The metrics actor: the one place that talks to the observer (progress line, CSV rows), so
// no learner or node ever blocks on output.
#include "actors/messages.h"

#include <caf/stateful_actor.hpp>

namespace starling::actors {

struct MetricsState {
  TrainObserver* observer = nullptr;
  static inline const char* name = "starling.metrics";
};

caf::behavior metrics_actor(caf::stateful_actor<MetricsState>* self, TrainObserver* observer);

}  // namespace starling::actors
