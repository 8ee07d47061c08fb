#pragma once
// What a node's checkpoint holds, and putting it back. Taken at a quiescent point (between
// orders, after any exchange with the peers), it is everything the node needs to continue
// exactly: z and z_prev, the shared optimizer of `average` mode, the iteration and sample
// counters, the next evaluation point, the loss accumulators, the learning rate, the
// evaluation history and time to target, the elapsed wall/evaluation/compute/exchange
// seconds, the auto-tuning decision, the number of exchanges done (the peers' round
// counters continue from it) and bytes moved; and, in sections "learner.<j>", every
// replica with its optimizer state and position in the data (Learner::save); and, in section
// "exchange" when the exchange algorithm keeps state beyond the model (gradient tracking's
// x̃, y, d̃; quasi-global momentum's x̃, M), that state with the members and round it belongs to, which the exchange takes
// up if it resumes in a view of the same members at that round (gossip/elastic_sync.h).
//
// Not restored (a resumed peer restarts them, as every peer of a job resumed together
// does, so the peers stay consistent with each other, but the run is no longer bit-exact
// with an uninterrupted one): CHOCO-SGD's public copies (back to zero) and codec streams,
// the adaptive-compression controller's density, async gossip's partner choice and its
// neighbours' last known steps. A single peer resumed while the others go on cannot rejoin
// a synchronous exchange: its round is behind theirs.
#include "actors/node_state.h"
#include "learners/checkpoints/checkpoint.h"

#include <vector>

namespace starling::actors {

/// What a checkpoint must match to fit a node: model, parameter count, learner count,
/// intra-node sync, optimizer, batch, the task's training samples, exchange mode, peers and rank.
Fingerprint node_fingerprint(const NodeSpec& spec, const Model& model, const Task& task);

/// The node's state and every lent learner's (in index order), as of now.
Checkpoint capture_node(NodeState& s, const std::vector<Learner*>& learners);

/// Puts the node's own part back into a freshly set-up node; returns the number of learners
/// the checkpoint was taken with. CheckpointError on a section of another layout.
int restore_node(NodeState& s, const Checkpoint& in);

/// Puts learner `index`'s part back. CheckpointError when it is missing or does not fit.
void restore_learner(Learner& learner, int index, const Checkpoint& in);

}  // namespace starling::actors
