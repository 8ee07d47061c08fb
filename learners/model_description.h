#pragma once
// A model as a list of layers with their shapes: the one definition of an architecture.
// The Model is built from it, and it is exported as JSON (`starling model --json`) for the
// PyTorch references, which build the same architecture from the export.
#include "learners/layer.h"
#include "learners/layers/embedding.h"  // kGptInitStd

#include <stdexcept>
#include <string>
#include <vector>

namespace starling {

struct ModelSpec;

/// One layer of a description. `size` is a dense layer's units, a convolution's output
/// channels or a token embedding's width; kernel/stride apply to convolutions and pooling,
/// padding and `bias` to convolutions, `groups` to GroupNorm, `rate` to dropout; a residual
/// block is y = body(x) + shortcut(x), the shortcut the identity when empty.
///
/// The language-model kinds act on token sequences {1, T, C} (learners/gpt.h builds nanoGPT
/// from them): token_embedding turns T ids {1, T, 1} into {1, T, size} over `vocab` tokens
/// (0: the data's vocabulary, the model's classes); position_embedding adds a learned
/// [T × C]; layernorm and rmsnorm normalise each token; attention is causal self-attention
/// with `heads` heads, its fused QKV projection (weights N(0, init_std)) and its output
/// projection (N(0, projection_std)) inside it; gelu is the exact GELU; a dense layer with
/// `per_token` maps each token's C to `size` (weights N(0, init_std)) rather than flattening;
/// tied_head gives each token's logits over the vocabulary with the weights of the list's
/// first token_embedding (one slice of the arena, both layers' gradients added).
struct LayerDesc {
  enum class Kind {
    dense, conv2d, maxpool2d, relu, flatten, groupnorm, global_avgpool, residual, avgpool2d, dropout,
    token_embedding, position_embedding, layernorm, rmsnorm, attention, gelu, tied_head
  };
  Kind kind = Kind::relu;
  int size = 0, kernel = 0, stride = 1, padding = 0, groups = 0;
  int heads = 0, vocab = 0;
  bool bias = true, per_token = false;
  double rate = 0.0;  // dropout: the probability of zeroing a value
  float init_std = kGptInitStd, projection_std = kGptInitStd;  // per-token dense and attention
  std::vector<LayerDesc> body, shortcut;
  Shape in, out;  // per-sample shapes, height × width × channels
};

/// The layer names used in the config and the export, indexed by Kind.
const char* layer_kind_name(LayerDesc::Kind kind);
inline constexpr int kLayerKinds = 17;

/// An impossible description: the index of the offending layer in the top-level list (−1:
/// the model as a whole), the key at fault within it (e.g. "size", or "body[1].groups"
/// inside a residual block), and why.
class ModelError : public std::invalid_argument {
 public:
  ModelError(int layer, std::string key, const std::string& what)
      : std::invalid_argument(what), layer_(layer), key_(std::move(key)) {}
  int layer() const { return layer_; }
  const std::string& key() const { return key_; }

 private:
  int layer_;
  std::string key_;
};

/// The layers of a spec, with shapes: a preset's ("mlp", "cnn", "resnet8", "gpt") or, for kind
/// "layers", the spec's own list (its kinds, sizes, kernels, strides and paddings; shapes are
/// filled in). Throws ModelError on an unknown kind, a non-positive size, a window larger than
/// its input, heads that do not divide the width, a sequence layer on a non-sequence, a tied
/// head without a token embedding, a vocabulary other than the classes, or a last layer whose
/// output is not one value per class (per token, for a language model).
std::vector<LayerDesc> describe_model(const ModelSpec& spec);

/// `layers` with their shapes filled in from `input`, a token_embedding's vocabulary 0 read as
/// `vocab`; throws ModelError as describe_model does (the last layer unchecked).
std::vector<LayerDesc> with_shapes(const std::vector<LayerDesc>& layers, Shape input, int vocab);

/// A language model: its first layer embeds tokens, and it gives logits per token.
bool is_language_model(const std::vector<LayerDesc>& layers);
/// The "gpt" preset, or a layer list that is a language model.
bool is_language_model(const ModelSpec& spec);

/// The spec's layers as the config's `[[model.layers]]` tables (TOML), each key its kind
/// takes written out, so that a config with them builds the same model, bit for bit.
std::string layers_toml(const ModelSpec& spec);

/// {"kind": ..., "input": [h, w, c], "classes": n, "parameters": trainable count,
///  "layers": [{"kind": ..., "in": [...], "out": [...], ...}]}; a language model adds its
/// "context" and "vocab", and "gpt" its sizes: "blocks", "heads", "width", "bias", "tied_head".
std::string model_json(const ModelSpec& spec);

}  // namespace starling
