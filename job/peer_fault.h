#pragma once
// Faults a real peer process can be started with, for tests and benchmarks
// (`starling peer --fault NAME`): the misbehaviour the in-process tests inject through
// gossip's test hooks, in a process of its own.
#include <string>

#include "job/config.h"

namespace starling::job {

/// Makes this peer misbehave as `name` says. "lying-seeder": it flips one bit in every chunk
/// of state it hands over (to a joiner or a healing peer), after the chunk digests were taken
/// from its true state, so the receiver must catch it. Empty: no fault. Throws ConfigError
/// naming --fault for any other name.
void inject_fault(Config& config, const std::string& name);

}  // namespace starling::job
