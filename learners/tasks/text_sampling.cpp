#include "learners/tasks/text_sampling.h"

#include "learners/data/sampler.h"
#include "learners/models/model_description.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace starling {
namespace {

// The byte drawn by u in [0, 1) from softmax(logits / temperature), cut to top-k and top-p;
// the argmax at temperature 0. Without a cut the bytes are walked in id order.
int draw(const float* logits, int vocab, const SamplingSpec& spec, double u) {
  const int best = static_cast<int>(std::max_element(logits, logits + vocab) - logits);
  if (spec.temperature == 0.0) return best;
  std::vector<int> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  const bool cut = spec.top_k > 0 || spec.top_p < 1.0;
  if (cut) std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::size_t keep = spec.top_k > 0 ? std::min<std::size_t>(order.size(), static_cast<std::size_t>(spec.top_k)) : order.size();
  std::vector<double> weights(keep);
  double sum = 0.0;
  for (std::size_t i = 0; i < keep; ++i) sum += weights[i] = std::exp((logits[order[i]] - logits[best]) / spec.temperature);
  if (spec.top_p < 1.0) {  // the fewest most likely bytes whose probabilities reach p
    double mass = 0.0;
    for (std::size_t i = 0; i < keep; ++i)
      if ((mass += weights[i]) >= spec.top_p * sum) {
        keep = i + 1, sum = mass;
        break;
      }
  }
  double target = u * sum;
  for (std::size_t i = 0; i < keep; ++i)
    if ((target -= weights[i]) < 0.0) return order[i];
  return order[keep - 1];  // rounding left the target at the very end
}

// How many bytes at the end of `text` may still grow into `stop`: the longest suffix of
// text that is a proper prefix of stop.
std::size_t held_back(const std::string& text, const std::string& stop) {
  for (std::size_t n = std::min(text.size(), stop.size() - 1); n > 0; --n)
    if (text.compare(text.size() - n, n, stop, 0, n) == 0) return n;
  return 0;
}

}  // namespace

void check_sampling(const SamplingSpec& spec) {
  if (spec.temperature < 0.0 || !std::isfinite(spec.temperature))
    throw std::invalid_argument("temperature: must be finite and at least 0");
  if (spec.bytes < 0) throw std::invalid_argument("bytes: must not be negative");
  if (spec.top_k < 0) throw std::invalid_argument("top-k: must be 0 (off) or more");
  if (!(spec.top_p > 0.0 && spec.top_p <= 1.0)) throw std::invalid_argument("top-p: must lie in (0, 1]");
}

std::string sample_text(Model& model, kernels::Backend backend, const std::string& prompt, const SamplingSpec& spec,
                        const std::function<void(const std::string&)>& emit, const Tokenizer* tokenizer) {
  const ModelSpec& m = model.spec();
  if (!is_language_model(m))
    throw std::invalid_argument("sampling text needs a language model (model.kind = \"gpt\" or a list from a token_embedding), not " + m.kind);
  check_sampling(spec);
  const int context = m.context, vocab = m.classes;
  if (tokenizer && tokenizer->vocabulary() != vocab)
    throw std::invalid_argument("sampling: the tokenizer has " + std::to_string(tokenizer->vocabulary()) +
                                " tokens, the model " + std::to_string(vocab));
  std::string text = prompt.empty() ? std::string("\n") : prompt;
  std::vector<int32_t> ids;
  if (tokenizer) ids = tokenizer->encode(text);
  else for (char c : text) ids.push_back(static_cast<unsigned char>(c));
  const std::size_t start = text.size();
  std::size_t emitted = start;
  std::vector<float> window(static_cast<std::size_t>(context), 0.0f);
  model.set_mode(false);
  for (int i = 0; i < spec.bytes; ++i) {
    // The last `context` tokens, left-aligned: causal attention keeps the padding after them
    // from reaching the position read.
    const std::size_t used = std::min(ids.size(), static_cast<std::size_t>(context));
    for (std::size_t t = 0; t < used; ++t) window[t] = static_cast<float>(ids[ids.size() - used + t]);
    std::fill(window.begin() + static_cast<std::ptrdiff_t>(used), window.end(), 0.0f);
    const float* logits = model.forward(backend, 1, window.data()) + (used - 1) * static_cast<std::size_t>(vocab);
    const uint64_t bits = mix_seed(spec.seed, static_cast<uint64_t>(i));
    const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
    const std::size_t before = text.size();
    ids.push_back(draw(logits, vocab, spec, u));
    if (tokenizer) text += tokenizer->token_text(ids.back());
    else text.push_back(static_cast<char>(ids.back()));
    // The stop string, in the continuation, ending in what this draw added (a token may add
    // several bytes, so it need not end the text).
    if (!spec.stop.empty()) {
      const std::size_t from = std::max(start, before + 1 >= spec.stop.size() ? before + 1 - spec.stop.size() : std::size_t{0});
      if (const std::size_t at = text.find(spec.stop, from); at != std::string::npos) {
        text.resize(at);
        break;
      }
    }
    const std::string continuation = text.substr(start);
    const std::size_t ready = text.size() - (spec.stop.empty() ? 0 : held_back(continuation, spec.stop));
    if (emit && ready > emitted) emit(text.substr(emitted, ready - emitted));
    emitted = std::max(emitted, ready);
  }
  if (emit && text.size() > emitted) emit(text.substr(emitted));
  return text.substr(start);
}

}  // namespace starling
