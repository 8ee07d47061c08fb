#include "learners/text_learner.h"

#include "learners/learner.h"
#include "learners/loss.h"
#include "learners/sampler.h"

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

}  // namespace

double bits_per_byte(double nats) { return nats / std::log(2.0); }

uint64_t window_seed(uint64_t seed, uint64_t stream) { return mix_seed(seed, 0x7e47 ^ (stream << 32)); }

TextLearner::TextLearner(const TextLearnerSpec& spec, const TextCorpus& corpus, TextPart part)
    : spec_(spec),
      corpus_(corpus),
      model_(spec.model),
      optimizer_(make_optimizer(model_.param_count(), spec.optimizer, model_.matrix_spans())),
      sampler_(std::move(part), spec.model.context + 1, window_seed(spec.seed, spec.stream), spec.learner) {
  if (spec.batch < 1) throw std::invalid_argument("text learner: batch must be at least 1");
  model_.init(spec.seed);
  const std::size_t positions = static_cast<std::size_t>(spec.batch) * spec.model.context;
  starts_.resize(static_cast<std::size_t>(spec.batch));
  tokens_.resize(static_cast<std::size_t>(spec.batch) * (spec.model.context + 1));
  targets_.resize(positions);
  x_.resize(positions);
  dlogits_.resize(positions * static_cast<std::size_t>(spec.model.classes));
}

void TextLearner::save(SectionWriter& out) { save_learner_state(out, steps_, model_, *optimizer_); }

void TextLearner::restore(SectionReader& in) { steps_ = restore_learner_state(in, model_, *optimizer_); }

void TextLearner::reposition(int64_t step) {
  steps_ = step;
  optimizer_->reset();
}

double TextLearner::step(float lr) {
  const int n = spec_.batch, context = spec_.model.context;
  sampler_.batch(steps_, n, starts_.data());
  corpus_.gather(starts_.data(), n, context + 1, tokens_.data());
  split_windows(tokens_.data(), n, context, x_.data(), targets_.data());
  // Learner 0's masks are those of a one-learner node.
  model_.set_mode(true, mix_seed(spec_.seed, static_cast<uint64_t>(steps_)) ^ (static_cast<uint64_t>(spec_.learner) << 40));
  const float* logits = model_.forward(spec_.backend, n, x_.data());
  const double loss = sequence_cross_entropy(n, context, spec_.model.classes, logits, targets_.data(), dlogits_.data());
  model_.backward(spec_.backend, n, x_.data(), dlogits_.data());
  if (spec_.on_gradients) spec_.on_gradients(model_.grads(), model_.param_count());
  optimizer_->step(model_.params(), model_.grads(), model_.param_count(), lr);
  ++steps_;
  return loss;
}

TextEvaluation evaluate_text(Model& model, kernels::Backend backend, const TextCorpus& corpus, int batch) {
  const int context = model.spec().context, vocab = model.spec().classes;
  const std::vector<uint64_t> starts = validation_windows(corpus, context + 1);
  if (starts.empty()) throw std::invalid_argument("text evaluation: no validation window");
  std::vector<int32_t> tokens(static_cast<std::size_t>(batch) * (context + 1)), targets(static_cast<std::size_t>(batch) * context);
  AlignedBuffer<float> x(static_cast<std::size_t>(batch) * context);
  model.set_mode(false);
  double sum = 0.0;
  for (std::size_t first = 0; first < starts.size(); first += static_cast<std::size_t>(batch)) {
    const int n = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(batch), starts.size() - first));
    corpus.gather(starts.data() + first, n, context + 1, tokens.data());
    split_windows(tokens.data(), n, context, x.data(), targets.data());
    const float* logits = model.forward(backend, n, x.data());
    sum += sequence_cross_entropy(n, context, vocab, logits, targets.data(), nullptr) * n;
  }
  const double loss = sum / static_cast<double>(starts.size());
  return {loss, bits_per_byte(loss)};
}

}  // namespace starling
