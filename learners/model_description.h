#pragma once
// A model as a list of layers with their shapes: the one definition of an architecture.
// The Model is built from it, and it is exported as JSON (`starling model --json`) for the
// PyTorch references, which build the same architecture from the export.
#include "learners/layer.h"

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

/// The layer names used in the export, indexed by Kind.
const char* layer_kind_name(LayerDesc::Kind kind);

/// The layers of a spec's preset ("mlp", "cnn") for its input and classes, with shapes;
/// throws std::invalid_argument on an unknown kind or an impossible shape.
std::vector<LayerDesc> describe_model(const ModelSpec& spec);

/// {"kind": ..., "input": [h, w, c], "classes": n, "parameters": trainable count,
///  "layers": [{"kind": ..., "in": [...], "out": [...], ...}]}
std::string model_json(const ModelSpec& spec);

}  // namespace starling
