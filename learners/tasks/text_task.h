#pragma once
// Language modelling on byte text as a task (learners/tasks/task.h): a learner's batch at step s
// is n windows of context + 1 bytes drawn from its peer's part of the text
// (learners/data/text_sampler.h); the model reads the first `context` bytes as token ids and
// every position is scored against the next byte with the sequence cross-entropy; the
// evaluation is the mean loss over every validation window, in nats per byte, whose metric
// is bits per byte.
#include "learners/data/text_partition.h"
#include "learners/data/text_sampler.h"
#include "learners/tasks/task.h"

namespace starling {

/// The seed of the windows of the learners of the peer with this seed and stream (its rank);
/// learner j draws with WindowSampler's shard j. bench/starling_sampling.py mirrors both,
/// bit for bit.
uint64_t window_seed(uint64_t seed, uint64_t stream);

/// Bits per byte of a mean loss in nats per byte.
double bits_per_byte(double nats);

/// Bytes of text that the targets of the window at `start` (its positions after the first)
/// stand for: window − 1 on bytes.
uint64_t target_bytes(const TextCorpus& corpus, uint64_t start, int window);

/// Validation windows a forward takes at once: 2,048 tokens' worth (32 windows of nanoGPT's
/// CPU context of 64, 2 of GPT-2's 1,024), so that the central model's forward holds no more
/// than a training batch does at the larger sizes.
int evaluation_batch(int context);

/// The mean loss (nats per predicted byte) of `model` over every validation window of
/// `corpus` (validation_windows), `batch` windows at a time; on a tokenized corpus the
/// summed loss of every window's targets over the bytes they stand for. Accuracy is left at 0.
Evaluation evaluate_text(Model& model, kernels::Backend backend, const TextCorpus& corpus, int batch);

class TextTask final : public Task {
 public:
  /// One peer's task: `part` of `corpus` trains it, every file's validation part judges it.
  /// Windows are `window` bytes (the model's context + 1).
  TextTask(TextCorpus corpus, TextPart part, int window);

  const TextCorpus& corpus() const { return corpus_; }

  void check_model(const ModelSpec& model) const override;
  void check_learners(int, const LearnerSpec&) const override {}  // windows are drawn with replacement
  std::unique_ptr<BatchSource> batch_source(const LearnerSpec& spec) const override;
  int targets_per_sample(const ModelSpec& model) const override { return model.context; }
  double loss(const ModelSpec& model, int n, const float* logits, const int32_t* targets, float* dlogits) const override;
  Evaluation evaluate(Model& model, kernels::Backend backend) const override;
  bool reached(const Evaluation& e, double target) const override { return bits_per_byte(e.loss) <= target; }
  /// As nanoGPT counts them: the window starts the part offers, whatever the peer count.
  int64_t epoch_samples(int) const override { return static_cast<int64_t>(starts_); }
  uint64_t train_samples() const override { return starts_; }
  std::vector<int64_t> label_counts(const std::vector<LearnerSpec>&) const override { return {}; }

 private:
  TextCorpus corpus_;
  TextPart part_;
  int window_;
  uint64_t starts_;  // windows the part offers
};

}  // namespace starling
