#pragma once
// A GPT's parameters (learners/models/gpt.h) under nanoGPT's names and shapes, the names a PyTorch
// user loads with GPT.load_state_dict: transformer.wte.weight [vocab, C], transformer.wpe.weight
// [context, C], per block h.<i>.ln_1, attn.c_attn [3C, C], attn.c_proj [C, C], ln_2,
// mlp.c_fc [4C, C], mlp.c_proj [C, 4C] (weights and biases), transformer.ln_f, and
// lm_head.weight, tied to wte as nanoGPT ties it. nn.Linear keeps its weight as [out, in];
// Starling's arena keeps in × out, so those are transposed on the way.
#include "learners/models/gpt.h"
#include "learners/models/model.h"
#include "learners/models/safetensors.h"

#include <cstddef>
#include <string>
#include <vector>

namespace starling {

/// One tensor of nanoGPT's state dict and where it lives in the GPT's parameter arena.
struct GptTensor {
  std::string name;
  std::vector<int64_t> shape;  // PyTorch's
  std::size_t offset = 0;      // of its first value in the arena
  bool linear_weight = false;  // [out, in] in PyTorch, in × out in the arena
};

/// The tensors of the GPT `spec` names, in arena order (lm_head.weight, which has no slot of
/// its own, excluded).
std::vector<GptTensor> nanogpt_tensors(const GptSpec& spec);

/// The model's weights under nanoGPT's names, lm_head.weight included, with nanoGPT's
/// hyper-parameters (n_layer, n_head, n_embd, block_size, vocab_size, bias) as metadata.
/// Throws std::invalid_argument when the model is not the GPT of its spec.
TensorFile export_nanogpt(const Model& model);

/// Loads nanoGPT-named weights into `model`. Throws SafetensorsError naming the tensor when
/// one is missing, unexpected or of another shape, or when lm_head.weight differs from
/// transformer.wte.weight (an untied head); attention mask buffers (`.attn.bias`, which
/// older nanoGPT saves) are ignored.
void import_nanogpt(const TensorFile& file, Model& model);

}  // namespace starling
