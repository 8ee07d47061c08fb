#pragma once
// What a learner trains on and how its model is judged: the part that differs between image
// classification (learners/tasks/image_task.h) and language modelling (learners/tasks/text_task.h). A
// task holds its training and validation data; each learner draws its batches from a batch
// source the task makes for it and scores its logits with the task's loss, and the node
// judges its central model with the task's evaluation. A task is immutable once made, so a
// node's learners share one across threads.
#include "learners/models/model.h"
#include "learners/optimizers/optimizer.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace starling {

/// One learner of a node: its model and optimizer, and where in the job it draws its data.
struct LearnerSpec {
  ModelSpec model;
  OptimizerSpec optimizer;
  int batch = 32;
  kernels::Backend backend = kernels::Backend::native;
  uint64_t seed = 1;  // same seed, same initial model on every replica
  int learner = 0;    // its index in its node: its own draws within the peer's
  uint64_t stream = 0;  // its peer's rank: the peer's own draws from the same seed; 0 alone
  // Image tasks: the learner's shard of the peer's pool (learners/data/sampler.h).
  int shard = 0, shards = 1;
  /// The peer's part of a partition (learners/data/partition.h), shared by its learners; null:
  /// the whole training set (iid).
  std::shared_ptr<const std::vector<uint32_t>> part;
  /// A label-flipping attacker's learner (docs/byzantine.md) trains on class C−1−c for c.
  bool flip_labels = false;
};

/// A model judged on the task's validation data: accuracy (classification only) and the
/// mean loss (nats per sample, or per predicted byte for text).
struct Evaluation {
  double accuracy = 0.0;
  double loss = 0.0;
};

/// A learner's batches. Step s's batch is a function of s alone, so a resumed learner needs
/// only its step count.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// Fills step `step`'s inputs x [n × model input] and targets [n × Task::targets_per_sample];
  /// returns n, the learner's batch or fewer when its shard holds fewer samples.
  virtual int fill(int64_t step, float* x, int32_t* targets) = 0;
  /// The key of step `step`'s dropout masks: distinct per learner and step, the same again
  /// after a resume.
  virtual uint64_t dropout_key(int64_t step) const = 0;
  /// What an epoch of this learner's draws is: the samples of its shard, or the window starts
  /// of its peer's text.
  virtual uint64_t epoch_samples() const = 0;
};

class Task {
 public:
  virtual ~Task() = default;
  /// Throws std::invalid_argument when `model` does not fit the data.
  virtual void check_model(const ModelSpec& model) const = 0;
  /// Throws std::invalid_argument when `learners` learners with this spec's pool cannot
  /// each have a sample of their own.
  virtual void check_learners(int learners, const LearnerSpec& spec) const = 0;
  /// The batches of the learner with `spec`; throws std::invalid_argument when it has no data.
  virtual std::unique_ptr<BatchSource> batch_source(const LearnerSpec& spec) const = 0;
  /// Targets per sample: a class label, or the next byte at every position of a window.
  virtual int targets_per_sample(const ModelSpec& model) const = 0;
  /// The mean loss of n samples' logits against their targets, and its gradient with
  /// respect to the logits into `dlogits` unless it is null.
  virtual double loss(const ModelSpec& model, int n, const float* logits, const int32_t* targets, float* dlogits) const = 0;
  /// `model` on all of the validation data.
  virtual Evaluation evaluate(Model& model, kernels::Backend backend) const = 0;
  /// Whether an evaluation reaches `target` of the task's metric (accuracy at least, or
  /// bits per byte at most).
  virtual bool reached(const Evaluation& evaluation, double target) const = 0;
  /// Samples in one peer's epoch when the job has `peers` peers.
  virtual int64_t epoch_samples(int peers) const = 0;
  /// The training samples a checkpoint's run must have had (its fingerprint).
  virtual uint64_t train_samples() const = 0;
  /// Per class, the distinct samples that learners with these specs draw in epoch 0; empty
  /// for a task without classes.
  virtual std::vector<int64_t> label_counts(const std::vector<LearnerSpec>& specs) const = 0;
};

}  // namespace starling
