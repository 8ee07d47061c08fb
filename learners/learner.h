#pragma once
// One model replica training on its own shard of the data: the unit of work that a learner
// actor runs. Owns its model (parameters and gradients in the flat arena), optimizer state,
// sampler and batch buffers. No threads, no messaging: callers drive step().
#include "learners/checkpoint.h"
#include "learners/dataset.h"
#include "learners/model.h"
#include "learners/optimizer.h"
#include "learners/sampler.h"

#include <memory>

namespace starling {

struct LearnerSpec {
  ModelSpec model;
  OptimizerSpec optimizer;
  int batch = 32;
  kernels::Backend backend = kernels::Backend::native;
  uint64_t seed = 1;  // same seed, same initial model on every replica
  int shard = 0, shards = 1;
  /// The peer's part of a partition (learners/partition.h), shared by its learners; null:
  /// the whole training set (iid).
  std::shared_ptr<const std::vector<uint32_t>> part;
  /// A label-flipping attacker's learner (docs/byzantine.md) trains on class C−1−c for c.
  bool flip_labels = false;
};

/// The sampler a learner with `spec` draws its batches from; throws std::invalid_argument
/// when the shard is out of range or empty, or the part names a sample `train` lacks.
Sampler make_sampler(const LearnerSpec& spec, const Dataset& train);

/// Training samples per class among the distinct samples that learners with these specs draw
/// in epoch 0 (auto-tuned learners overlap, hence distinct): a peer's label distribution.
std::vector<int64_t> epoch_label_counts(const std::vector<LearnerSpec>& specs, const Dataset& train);

/// A learner's checkpoint section, shared by the image and text learners: its step count,
/// the model's parameters and the optimizer's state. restore_learner_state() throws
/// CheckpointError on a negative step count or arrays of another length.
void save_learner_state(SectionWriter& out, int64_t steps, const Model& model, Optimizer& optimizer);
int64_t restore_learner_state(SectionReader& in, Model& model, Optimizer& optimizer);

class Learner {
 public:
  /// Throws std::invalid_argument when the model does not fit the data or the shard is empty.
  Learner(const LearnerSpec& spec, const Dataset& train);

  Model& model() { return model_; }
  const Model& model() const { return model_; }
  Optimizer& optimizer() { return *optimizer_; }
  const LearnerSpec& spec() const { return spec_; }

  /// Full batches in this learner's shard per epoch (at least 1).
  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  int64_t steps() const { return steps_; }

  /// Forward and backward on the next batch: fills model().grads(); returns the batch's mean loss.
  double compute_gradient();
  /// compute_gradient() then one optimizer step at learning rate lr; an optimizer with a
  /// fused form (SGD) steps each layer inside the backward, and grads() is then undefined.
  double step(float lr);

  /// The replica, its optimizer state and its position in the data, for a checkpoint. The
  /// sampler needs only the step count: an epoch's order is a function of seed and epoch.
  void save(SectionWriter& out);
  /// Continues exactly where save() was called (same spec); CheckpointError otherwise.
  void restore(SectionReader& in);

 private:
  LearnerSpec spec_;
  Dataset train_;
  Model model_;
  std::unique_ptr<Optimizer> optimizer_;
  Sampler sampler_;
  int64_t steps_per_epoch_;
  int64_t steps_ = 0;
  AlignedBuffer<float> x_, dlogits_;
  std::vector<int32_t> labels_;

  // Forward and backward on the next batch, with the optimizer step fused where `update` is set.
  double run_batch(const ParamUpdate* update);
};

struct Evaluation {
  double accuracy = 0.0;
  double loss = 0.0;
};

/// Accuracy and mean cross-entropy of `model` on all of `data`.
Evaluation evaluate(Model& model, kernels::Backend backend, const Dataset& data, int batch = 250);

}  // namespace starling
