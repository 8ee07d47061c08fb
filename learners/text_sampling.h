#pragma once
// Sampling bytes from a trained language model: each new byte is drawn from the softmax of
// the model's logits at the last position of its window (the last `context` bytes so far)
// divided by a temperature; temperature 0 takes the most likely byte. The draws are a pure
// function of the seed, so a sample can be reproduced.
#include "learners/model.h"

#include <cstdint>
#include <string>

namespace starling {

struct SamplingSpec {
  int bytes = 256;           // bytes to add after the prompt
  double temperature = 0.8;  // ≥ 0
  uint64_t seed = 1;
};

/// The continuation of `prompt` (the prompt not included); an empty prompt starts from a
/// newline, as nanoGPT's sampler does. Throws std::invalid_argument on a model that is not a
/// language model, a negative temperature or byte count.
std::string sample_text(Model& model, kernels::Backend backend, const std::string& prompt, const SamplingSpec& spec);

}  // namespace starling
