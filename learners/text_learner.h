#pragma once
// A language model's learner on byte text: each step draws a batch of windows of
// context + 1 bytes (learners/text_sampler.h), feeds the first `context` bytes as token ids
// and scores every position against the next byte (the window shifted by one) with the
// sequence cross-entropy; and its evaluation over the validation windows, in nats and bits
// per byte.
#include "learners/checkpoint.h"
#include "learners/model.h"
#include "learners/optimizer.h"
#include "learners/text_sampler.h"

#include <functional>
#include <memory>

namespace starling {

struct TextLearnerSpec {
  ModelSpec model;  // kind "gpt": input {1, context, 1}, classes the vocabulary
  OptimizerSpec optimizer;
  int batch = 12;
  kernels::Backend backend = kernels::Backend::native;
  uint64_t seed = 1;  // the model's initialisation and the windows drawn
  uint64_t stream = 0;  // a peer's own windows from the same seed (its rank); 0 on one node
  int learner = 0;      // a node's learner: its own windows and dropout masks within the stream; 0 for the first
  /// Called with the gradient of every parameter between the backward pass and the optimizer
  /// step, which then steps on what it leaves there: a peer's gradient all-reduce (DDP's step).
  std::function<void(float* grads, std::size_t count)> on_gradients;
};

/// The seed of the windows of the learner with this seed and stream (bench/starling_sampling.py
/// mirrors it, and WindowSampler, bit for bit).
uint64_t window_seed(uint64_t seed, uint64_t stream);

class TextLearner {
 public:
  /// Throws std::invalid_argument when the batch is not positive or `part` offers no window.
  TextLearner(const TextLearnerSpec& spec, const TextCorpus& corpus, TextPart part);

  Model& model() { return model_; }
  int64_t steps() const { return steps_; }
  /// Windows the part offers: what an epoch of text is measured in.
  uint64_t window_starts() const { return sampler_.starts(); }

  /// Forward, backward and one optimizer step at lr on the next batch; the batch's mean loss in nats.
  double step(float lr);

  /// The step count, the parameters and the optimizer's state, for a checkpoint section.
  void save(SectionWriter& out);
  /// Continues exactly where save() was called (same spec); CheckpointError otherwise.
  void restore(SectionReader& in);
  /// Goes on from `step` (a running job's position) with the model as it now is: the next
  /// step draws that step's windows, and the optimizer starts afresh (no moments).
  void reposition(int64_t step);

 private:
  TextLearnerSpec spec_;
  TextCorpus corpus_;
  Model model_;
  std::unique_ptr<Optimizer> optimizer_;
  WindowSampler sampler_;
  int64_t steps_ = 0;
  std::vector<uint64_t> starts_;
  std::vector<int32_t> tokens_, targets_;
  AlignedBuffer<float> x_, dlogits_;
};

struct TextEvaluation {
  double loss = 0.0;  // mean nats per predicted byte
  double bpb = 0.0;   // bits per byte: loss / ln 2
};

/// The mean loss of `model` over every validation window of `corpus`
/// (validation_windows), `batch` windows at a time.
TextEvaluation evaluate_text(Model& model, kernels::Backend backend, const TextCorpus& corpus, int batch = 32);

/// Bits per byte of a mean loss in nats per byte.
double bits_per_byte(double nats);

}  // namespace starling
