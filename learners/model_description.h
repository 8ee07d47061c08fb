#pragma once
// A model as a list of layers with their shapes: the one definition of an architecture.
// The Model is built from it, and it is exported as JSON (`starling model --json`) for the
// PyTorch references, which build the same architecture from the export.
#include "learners/layer.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace starling {

struct ModelSpec;

/// One layer of a description. `size` is a dense layer's units or a convolution's output
/// channels; kernel/stride apply to convolutions and pooling, padding and `bias` to
/// convolutions, `groups` to GroupNorm, `rate` to dropout; a residual block is y = body(x) + shortcut(x), the
/// shortcut the identity when empty.
struct LayerDesc {
  enum class Kind { dense, conv2d, maxpool2d, relu, flatten, groupnorm, global_avgpool, residual, avgpool2d, dropout };
  Kind kind = Kind::relu;
  int size = 0, kernel = 0, stride = 1, padding = 0, groups = 0;
  bool bias = true;
  double rate = 0.0;  // dropout: the probability of zeroing a value
  std::vector<LayerDesc> body, shortcut;
  Shape in, out;  // per-sample shapes, height × width × channels
};

/// The layer names used in the config and the export, indexed by Kind.
const char* layer_kind_name(LayerDesc::Kind kind);
inline constexpr int kLayerKinds = 10;

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

/// The layers of a spec, with shapes: a preset's ("mlp", "cnn", "resnet8") or, for kind "layers", the
/// spec's own list (its kinds, sizes, kernels, strides and paddings; shapes are filled in).
/// Throws ModelError on an unknown kind, a non-positive size, a window larger than its
/// input, or a last layer whose output is not one value per class.
std::vector<LayerDesc> describe_model(const ModelSpec& spec);

/// {"kind": ..., "input": [h, w, c], "classes": n, "parameters": trainable count,
///  "layers": [{"kind": ..., "in": [...], "out": [...], ...}]}; for "gpt", its sizes:
/// {"kind": "gpt", "blocks", "heads", "width", "context", "vocab", "bias", "tied_head", "parameters"}.
std::string model_json(const ModelSpec& spec);

}  // namespace starling
