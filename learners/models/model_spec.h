#pragma once
// What a model is asked to be (model.*): a preset kind and its sizes, or a list of layers,
// and the input and classes of its data. learners/models/model_description.h turns it into
// layers with shapes, and learners/models/model.h builds it.
#include "learners/models/layer.h"
#include "learners/models/layer_row.h"

#include <memory>
#include <string>
#include <vector>

namespace starling {

struct ModelSpec {
  std::string kind = "mlp";        // "mlp" | "cnn" | "resnet8" | "gpt" | "layers" (the list below)
  std::vector<int> hidden{256, 128};  // mlp hidden layer sizes
  Shape input{28, 28, 1};
  int classes = 10;
  std::vector<LayerDesc> layers;  // kind "layers": the config's list (shapes filled in when built)
  int context = 64;               // language models: bytes of context; a training window is context + 1
  int blocks = 4, heads = 4, width = 128;  // "gpt": transformer blocks, attention heads, embedding width
  std::string mlp = "gelu";                // "gpt": a block's MLP (learners/models/gpt.h's kGptMlps)
  /// Weights to start from in place of the seeded draw (a whole parameter arena, e.g. a
  /// safetensors file imported by run.init_from); null: drawn from the seed.
  std::shared_ptr<const std::vector<float>> initial;
};

}  // namespace starling
