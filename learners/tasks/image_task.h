#pragma once
// Image classification as a task (learners/tasks/task.h): a learner draws each epoch's batches
// from its shard of a seeded shuffle of the training set, or of its peer's part of a
// partition (learners/data/sampler.h); the loss is the softmax cross-entropy against the labels;
// the evaluation is the accuracy and mean loss on the test set.
#include "learners/data/dataset.h"
#include "learners/data/sampler.h"
#include "learners/tasks/task.h"

#include <vector>

namespace starling {

/// The sampler a learner with `spec` draws its batches from; throws std::invalid_argument
/// when the shard is out of range or empty, or the part names a sample `train` lacks.
Sampler make_sampler(const LearnerSpec& spec, const Dataset& train);

/// Training samples per class among the distinct samples that learners with these specs draw
/// in epoch 0 (auto-tuned learners overlap, hence distinct): a peer's label distribution.
std::vector<int64_t> epoch_label_counts(const std::vector<LearnerSpec>& specs, const Dataset& train);

/// Test samples a forward of the evaluation takes at once.
inline constexpr int kImageEvaluationBatch = 250;

/// Accuracy and mean cross-entropy of `model` on all of `data`, `batch` samples at a time.
Evaluation evaluate(Model& model, kernels::Backend backend, const Dataset& data, int batch = kImageEvaluationBatch);

class ImageTask final : public Task {
 public:
  ImageTask(Dataset train, Dataset test) : train_(std::move(train)), test_(std::move(test)) {}

  const Dataset& train() const { return train_; }
  const Dataset& test() const { return test_; }

  void check_model(const ModelSpec& model) const override;
  void check_learners(int learners, const LearnerSpec& spec) const override;
  std::unique_ptr<BatchSource> batch_source(const LearnerSpec& spec) const override;
  int targets_per_sample(const ModelSpec&) const override { return 1; }
  double loss(const ModelSpec& model, int n, const float* logits, const int32_t* targets, float* dlogits) const override;
  Evaluation evaluate(Model& model, kernels::Backend backend) const override;
  bool reached(const Evaluation& e, double target) const override { return e.accuracy >= target; }
  int64_t epoch_samples(int peers) const override { return static_cast<int64_t>(train_.size()) / std::max(1, peers); }
  uint64_t train_samples() const override { return train_.size(); }
  std::vector<int64_t> label_counts(const std::vector<LearnerSpec>& specs) const override {
    return epoch_label_counts(specs, train_);
  }

 private:
  Dataset train_, test_;
};

}  // namespace starling
