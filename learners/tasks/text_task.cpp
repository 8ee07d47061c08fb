#include "learners/tasks/text_task.h"

#include "learners/data/sampler.h"
#include "learners/models/model_description.h"
#include "learners/tasks/loss.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace starling {
namespace {

// Windows of context + 1 tokens into the model's input (the first `context` as floats) and
// the targets (the last `context`).
void split_windows(const int32_t* tokens, int n, int context, float* x, int32_t* targets) {
  for (int i = 0; i < n; ++i) {
    const int32_t* w = tokens + static_cast<std::size_t>(i) * (context + 1);
    for (int t = 0; t < context; ++t) {
      x[static_cast<std::size_t>(i) * context + t] = static_cast<float>(w[t]);
      targets[static_cast<std::size_t>(i) * context + t] = w[t + 1];
    }
  }
}

// Each step's windows, drawn at seeded starts of the peer's part.
class TextBatches final : public BatchSource {
 public:
  TextBatches(const LearnerSpec& spec, const TextCorpus& corpus, const TextPart& part)
      : corpus_(corpus),
        sampler_(part, spec.model.context + 1, window_seed(spec.seed, spec.stream), spec.learner),
        batch_(spec.batch),
        context_(spec.model.context),
        seed_(spec.seed),
        learner_(spec.learner),
        starts_(static_cast<std::size_t>(spec.batch)),
        tokens_(static_cast<std::size_t>(spec.batch) * (spec.model.context + 1)) {}

  int fill(int64_t step, float* x, int32_t* targets) override {
    sampler_.batch(step, batch_, starts_.data());
    corpus_.gather(starts_.data(), batch_, context_ + 1, tokens_.data());
    split_windows(tokens_.data(), batch_, context_, x, targets);
    return batch_;
  }
  // Learner 0's masks are those of a one-learner node.
  uint64_t dropout_key(int64_t step) const override {
    return mix_seed(seed_, static_cast<uint64_t>(step)) ^ (static_cast<uint64_t>(learner_) << 40);
  }
  uint64_t epoch_samples() const override { return sampler_.starts(); }

 private:
  TextCorpus corpus_;
  WindowSampler sampler_;
  int batch_, context_;
  uint64_t seed_;
  int learner_;
  std::vector<uint64_t> starts_;
  std::vector<int32_t> tokens_;
};

}  // namespace

uint64_t target_bytes(const TextCorpus& corpus, uint64_t start, int window) {
  return corpus.bytes_covered(start + 1, start + static_cast<uint64_t>(window));
}

double bits_per_byte(double nats) { return nats / std::log(2.0); }

uint64_t window_seed(uint64_t seed, uint64_t stream) { return mix_seed(seed, 0x7e47 ^ (stream << 32)); }

TextTask::TextTask(TextCorpus corpus, TextPart part, int window)
    : corpus_(std::move(corpus)), part_(std::move(part)), window_(window), starts_(window_starts(part_, window)) {}

void TextTask::check_model(const ModelSpec& model) const {
  if (!is_language_model(model) || model.context + 1 != window_ || model.classes != corpus_.vocabulary())
    throw std::invalid_argument("learner: the model is not a language model of context " + std::to_string(window_ - 1) +
                                " over " + std::to_string(corpus_.vocabulary()) + " tokens");
}

std::unique_ptr<BatchSource> TextTask::batch_source(const LearnerSpec& spec) const {
  return std::make_unique<TextBatches>(spec, corpus_, part_);
}

double TextTask::loss(const ModelSpec& model, int n, const float* logits, const int32_t* targets, float* dlogits) const {
  return sequence_cross_entropy(n, model.context, model.classes, logits, targets, dlogits);
}

int evaluation_batch(int context) { return std::max(1, 2048 / std::max(1, context)); }

Evaluation TextTask::evaluate(Model& model, kernels::Backend backend) const {
  return evaluate_text(model, backend, corpus_, evaluation_batch(window_ - 1));
}

Evaluation evaluate_text(Model& model, kernels::Backend backend, const TextCorpus& corpus, int batch) {
  const int context = model.spec().context, vocab = model.spec().classes;
  const std::vector<uint64_t> starts = validation_windows(corpus, context + 1);
  if (starts.empty()) throw std::invalid_argument("text evaluation: no validation window");
  std::vector<int32_t> tokens(static_cast<std::size_t>(batch) * (context + 1)), targets(static_cast<std::size_t>(batch) * context);
  AlignedBuffer<float> x(static_cast<std::size_t>(batch) * context);
  model.set_mode(false);
  // Bytes: the mean of the windows' means. Tokens: the windows' summed nats over the bytes
  // their targets stand for.
  const bool tokens_in = corpus.is_tokenized();
  double sum = 0.0, bytes = 0.0;
  for (std::size_t first = 0; first < starts.size(); first += static_cast<std::size_t>(batch)) {
    const int n = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(batch), starts.size() - first));
    corpus.gather(starts.data() + first, n, context + 1, tokens.data());
    split_windows(tokens.data(), n, context, x.data(), targets.data());
    const float* logits = model.forward(backend, n, x.data());
    const double loss = sequence_cross_entropy(n, context, vocab, logits, targets.data(), nullptr) * n;
    sum += tokens_in ? loss * context : loss;
    for (int i = 0; i < n && tokens_in; ++i) bytes += static_cast<double>(target_bytes(corpus, starts[first + i], context + 1));
  }
  Evaluation e;
  e.loss = sum / (tokens_in ? bytes : static_cast<double>(starts.size()));
  return e;
}

}  // namespace starling
