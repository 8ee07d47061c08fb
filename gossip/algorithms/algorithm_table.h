#pragma once
// The table from an exchange mode and its variant to the synchronous algorithm that runs
// it (algorithm_table.cpp, the one file that includes every algorithm).
#include <memory>

#include "gossip/algorithms/exchange_spec.h"
#include "gossip/algorithms/sync_algorithm.h"

namespace starling::gossip {

/// The algorithm of spec.mode with spec.codec (and compression.adaptive), spec's
/// quasi-global momentum or its outer optimizer (with the codec, if any); InvalidArgument
/// for a mode without one (none, async-gossip) or a variant the mode cannot take.
std::unique_ptr<SyncAlgorithm> make_sync_algorithm(const SyncSetup& setup);

/// Whether the mode's rounds leave every member with the same model (all-reduce) rather
/// than each with its own (gossip).
bool common_model(ExchangeMode mode);

}  // namespace starling::gossip
