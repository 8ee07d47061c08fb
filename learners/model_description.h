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
/// channels; kernel/stride/padding apply to convolutions and pooling.
struct LayerDesc {
  enum class Kind { dense, conv2d, maxpool2d, relu, flatten };
  Kind kind = Kind::relu;
  int size = 0, kernel = 0, stride = 1, padding = 0;
  Shape in, out;  // per-sample shapes, height × width × channels
};

/// The layer names used in the config and the export, indexed by Kind.
const char* layer_kind_name(LayerDesc::Kind kind);
inline constexpr int kLayerKinds = 5;

/// An impossible description: the index of the offending layer in the list (−1: the model
/// as a whole), the key of that layer at fault, and why.
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

/// The layers of a spec, with shapes: a preset's ("mlp", "cnn") or, for kind "layers", the
/// spec's own list (its kinds, sizes, kernels, strides and paddings; shapes are filled in).
/// Throws ModelError on an unknown kind, a non-positive size, a window larger than its
/// input, or a last layer whose output is not one value per class.
std::vector<LayerDesc> describe_model(const ModelSpec& spec);

/// {"kind": ..., "input": [h, w, c], "classes": n, "parameters": trainable count,
///  "layers": [{"kind": ..., "in": [...], "out": [...], ...}]}
std::string model_json(const ModelSpec& spec);

}  // namespace starling
