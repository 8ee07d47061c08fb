#pragma once
// nanoGPT's architecture (Karpathy's model.py) as a layer description
// (learners/models/model_description.h), built on the layers of learners/layers/: token and position embeddings, `layers` pre-LayerNorm blocks
// x + attn(ln1(x)) and x + mlp(ln2(x)) (fused QKV, causal attention, output projection; a 4×
// MLP with exact GELU), biases on, a final LayerNorm and the LM head tied to the token
// embedding. Weights from N(0, 0.02), biases zero, LayerNorm gamma 1 and beta 0, and the
// attention's and the MLP's output projections from N(0, 0.02/√(2·layers)).
// The input is T token ids per sample (floats), the output T rows of vocabulary logits.
#include "learners/models/layer.h"
#include "learners/models/layer_row.h"
#include "learners/models/model_spec.h"

#include <memory>
#include <string>
#include <vector>

namespace starling {

/// The GPT preset's model.kind.
inline constexpr const char kGptKind[] = "gpt";

struct GptSpec {
  int layers = 4, heads = 4, width = 128, context = 64, vocab = 256;  // nanoGPT's CPU configuration
  std::string mlp = "gelu";  // a block's MLP, one of kGptMlps
};

/// A block's MLP (model.mlp): "gelu", nanoGPT's 4× MLP with exact GELU, or "swiglu", the
/// SwiGLU feed-forward (learners/layer_rows/swiglu.cpp) with gpt_swiglu_hidden(width) hidden
/// units, about as many parameters as the 4× MLP (LLaMA's 2/3 · 4 · width).
inline constexpr const char* kGptMlps[] = {"gelu", "swiglu"};

/// SwiGLU's hidden units in a GPT block of `width`: 8/3 · width rounded up to a multiple of 8.
constexpr int gpt_swiglu_hidden(int width) { return (8 * width / 3 + 7) / 8 * 8; }

/// A named GPT size (model.preset): its blocks, heads, width and context; the vocabulary is
/// the data's. nanoGPT's CPU configuration, its character-level Shakespeare configuration
/// (10.7 M parameters at its 65 characters) and GPT-2 small (124 M with GPT-2's 50,257
/// tokens; on bytes its embedding is 256 rows).
struct GptPreset {
  const char* name;
  int layers, heads, width, context;
};
inline constexpr GptPreset kGptPresets[] = {
    {"gpt-nano", 4, 4, 128, 64},
    {"gpt-10m", 6, 6, 384, 256},
    {"gpt2-small", 12, 12, 768, 1024},
};

/// The GPT a "gpt" spec names: its blocks, heads, width and context, the vocabulary its
/// `classes`.
GptSpec gpt_spec(const ModelSpec& spec);

/// The GPT as a layer list, shapes not yet filled in (with_shapes): the one definition of its
/// structure, which the "gpt" preset builds and `starling model --layers` writes out. Throws
/// std::invalid_argument when a size is not positive or the MLP is not one of kGptMlps.
std::vector<LayerDesc> gpt_description(const GptSpec& spec);

/// The layers in order; throws std::invalid_argument when a size is not positive or the
/// heads do not divide the width.
std::vector<std::unique_ptr<Layer>> make_gpt(const GptSpec& spec);

}  // namespace starling
