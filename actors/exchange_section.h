#pragma once
// The exchange algorithm's state beyond the model (gossip::AlgorithmState: DiLoCo's x₀ and
// outer momentum, error feedback, gradient tracking's trackers) as checkpoint section
// "exchange", with the members and round it belongs to; image nodes and text peers write
// the same section.
#include "gossip/algorithms/sync_algorithm.h"
#include "learners/checkpoints/checkpoint.h"

#include <cstddef>

namespace starling::actors {

/// Adds section "exchange" to `c`; none when the algorithm keeps no state.
void put_exchange_state(Checkpoint& c, const gossip::AlgorithmState& state);

/// Reads section "exchange" of a model of `parameters` values; CheckpointError when it holds
/// more than a few model lengths or does not parse.
gossip::AlgorithmState get_exchange_state(SectionReader in, std::size_t parameters);

}  // namespace starling::actors
