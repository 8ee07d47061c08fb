#pragma once
// Sampling bytes from a trained language model: each new byte is drawn from the softmax of
// the model's logits at the last position of its window (the last `context` bytes so far)
// divided by a temperature, restricted to the k most likely bytes (top-k) and to the fewest
// most likely bytes whose probabilities reach p (top-p, nucleus sampling), in that order;
// temperature 0 takes the most likely byte. The draws are a pure function of the seed, so a
// sample can be reproduced. With a tokenizer (learners/data/tokenizer.h) the same holds of its
// tokens: the prompt is encoded, each draw is a token, and the text grows by its text.
#include "learners/data/tokenizer.h"
#include "learners/models/model.h"

#include <cstdint>
#include <functional>
#include <string>

namespace starling {

struct SamplingSpec {
  int bytes = 256;           // bytes (with a tokenizer: tokens) to add after the prompt
  double temperature = 0.8;  // ≥ 0
  uint64_t seed = 1;
  int top_k = 0;             // 0: every byte
  double top_p = 1.0;        // in (0, 1]; 1: every byte
  /// Sampling ends once the continuation ends with this (excluded from the result); empty: never.
  std::string stop;
};

/// Throws std::invalid_argument naming the field when `spec` is out of range.
void check_sampling(const SamplingSpec& spec);

/// The continuation of `prompt` (the prompt not included); an empty prompt starts from a
/// newline, as nanoGPT's sampler does. `emit`, when given, receives the continuation as it
/// is drawn, never a byte of the stop string. Throws std::invalid_argument on a model that is
/// not a language model, on a spec check_sampling refuses, or on a tokenizer of another
/// vocabulary than the model's.
std::string sample_text(Model& model, kernels::Backend backend, const std::string& prompt, const SamplingSpec& spec,
                        const std::function<void(const std::string&)>& emit = {}, const Tokenizer* tokenizer = nullptr);

}  // namespace starling
