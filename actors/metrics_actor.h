#pragma once
// The metrics actor: the one place that talks to the observer (progress line, CSV rows) and
// to a live monitor (NodeSpec::on_snapshot), so no learner or node ever blocks on output.
#include "actors/messages.h"

#include <caf/stateful_actor.hpp>

#include <functional>

namespace starling::actors {

struct MetricsState {
  TrainObserver* observer = nullptr;
  std::function<void(const NodeSnapshot&)> on_snapshot;
  static inline const char* name = "starling.metrics";
};

caf::behavior metrics_actor(caf::stateful_actor<MetricsState>* self, TrainObserver* observer,
                            std::function<void(const NodeSnapshot&)> on_snapshot);

}  // namespace starling::actors
