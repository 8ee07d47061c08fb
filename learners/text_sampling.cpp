#include "learners/text_sampling.h"

#include "learners/model_description.h"
#include "learners/sampler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace starling {
namespace {

// The byte drawn from softmax(logits / temperature) by u in [0, 1); the argmax at temperature 0.
int draw(const float* logits, int vocab, double temperature, double u) {
  const int best = static_cast<int>(std::max_element(logits, logits + vocab) - logits);
  if (temperature == 0.0) return best;
  std::vector<double> weights(static_cast<std::size_t>(vocab));
  double sum = 0.0;
  for (int v = 0; v < vocab; ++v) sum += weights[v] = std::exp((logits[v] - logits[best]) / temperature);
  double target = u * sum;
  for (int v = 0; v < vocab; ++v)
    if ((target -= weights[v]) < 0.0) return v;
  return best;  // rounding left the target at the very end
}

}  // namespace

std::string sample_text(Model& model, kernels::Backend backend, const std::string& prompt, const SamplingSpec& spec) {
  const ModelSpec& m = model.spec();
  if (!is_language_model(m))
    throw std::invalid_argument("sampling text needs a language model (model.kind = \"gpt\" or a list from a token_embedding), not " + m.kind);
  if (spec.temperature < 0.0 || !std::isfinite(spec.temperature))
    throw std::invalid_argument("sampling text: the temperature must be finite and at least 0");
  if (spec.bytes < 0) throw std::invalid_argument("sampling text: the byte count must not be negative");
  const int context = m.context, vocab = m.classes;
  std::string text = prompt.empty() ? std::string("\n") : prompt;
  const std::size_t start = text.size();
  std::vector<float> window(static_cast<std::size_t>(context), 0.0f);
  model.set_mode(false);
  for (int i = 0; i < spec.bytes; ++i) {
    // The last `context` bytes, left-aligned: causal attention keeps the padding after them
    // from reaching the position read.
    const std::size_t used = std::min(text.size(), static_cast<std::size_t>(context));
    for (std::size_t t = 0; t < used; ++t)
      window[t] = static_cast<float>(static_cast<unsigned char>(text[text.size() - used + t]));
    std::fill(window.begin() + static_cast<std::ptrdiff_t>(used), window.end(), 0.0f);
    const float* logits = model.forward(backend, 1, window.data()) + (used - 1) * static_cast<std::size_t>(vocab);
    const uint64_t bits = mix_seed(spec.seed, static_cast<uint64_t>(i));
    const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
    text.push_back(static_cast<char>(draw(logits, vocab, spec.temperature, u)));
  }
  return text.substr(start);
}

}  // namespace starling
