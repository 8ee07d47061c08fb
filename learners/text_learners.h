#pragma once
// A node's learners of a language model (Crossbow's small-batch replicas on text): each
// learner j is a TextLearner with its own windows (shard j of the node's stream) and its own
// AdamW moments, and synchronous model averaging (learners/sma.h) keeps the replicas w_j
// close to the node's central model z: every `sync_every` steps
//   c_j = α (w_j − z),  w_j ← w_j − c_j,  z ← z + Σ_j c_j + μ (z − z_prev).
// z is the node's model: what is validated, mixed with peers and checkpointed. Every replica
// and z start as the model that spec.seed draws.
//
// A round moves only the weights: each learner's moments (AdamW's m, v and step count) stay
// its own and are never averaged, as Crossbow keeps each learner's optimizer state local.
// They follow that learner's own gradients, which SMA keeps close to the others'.
//
// The learners step in parallel, one thread each (learners/lockstep.h), and run the rounds
// among themselves (sma::SmaGroup, the image learners' own rounds), so a step's bits do not
// depend on which learner finishes first. With one learner there are no rounds and no
// threads: z is that learner's model, as on a one-learner node.
#include "learners/checkpoint.h"
#include "learners/lockstep.h"
#include "learners/sma_group.h"
#include "learners/text_learner.h"

#include <memory>
#include <vector>

namespace starling {

/// How a node's learners are kept together (the config's [node] keys).
struct TextSmaSpec {
  int learners = 1;
  double alpha = 0.0;     // elasticity α; 0: 1/learners
  double momentum = 0.0;  // μ of the central model
  int sync_every = 1;     // steps between rounds
};

class TextLearners {
 public:
  /// Throws std::invalid_argument when sma.learners or sma.sync_every is below 1, or as TextLearner does.
  TextLearners(const TextLearnerSpec& spec, const TextSmaSpec& sma, const TextCorpus& corpus, const TextPart& part);

  int size() const { return static_cast<int>(learners_.size()); }
  /// The node's model z (with one learner, that learner's model).
  Model& central() { return central_ ? *central_ : learners_.front()->model(); }
  /// Learner j's replica w_j.
  Model& replica(int j) { return learners_[static_cast<std::size_t>(j)]->model(); }
  /// Steps each learner has taken.
  int64_t steps() const { return learners_.front()->steps(); }
  /// Windows the part offers (what an epoch is measured in).
  uint64_t window_starts() const { return learners_.front()->window_starts(); }

  /// One step of every learner at `lr`, in parallel, then an SMA round when steps() reaches a
  /// multiple of sync_every; the learners' mean loss. Rethrows a learner's failure, after
  /// which the object must not step again.
  double step(float lr);

  /// Adds sections "central" (z), with several learners "central_prev" (z_prev), and
  /// "learner.<j>" for each learner (step count, replica, moments).
  void save(Checkpoint& c);
  /// Continues exactly where save() was called (same spec); CheckpointError otherwise.
  void restore(const Checkpoint& c);
  /// Goes on from `step` of a running job whose model z now holds: every replica restarts
  /// from z with fresh moments (TextLearner::reposition), and z's momentum from rest.
  void reposition(int64_t step);

 private:
  std::vector<std::unique_ptr<TextLearner>> learners_;
  std::unique_ptr<Model> central_;  // null with one learner
  AlignedBuffer<float> z_prev_;
  std::unique_ptr<sma::SmaGroup> group_;
  int sync_every_ = 1;
  std::vector<double> losses_;
  Lockstep threads_;
};

}  // namespace starling
