#pragma once
// Layers from their descriptions (learners/models/model_description.h), residual blocks included.
#include "learners/models/layer.h"
#include "learners/models/layer_row.h"

#include <memory>
#include <vector>

namespace starling {

/// The layers a list of descriptions names, in order, with the shapes it records; a ReLU
/// moves into the layer before it wherever that layer can apply it (residual bodies too).
/// Each row makes its layers (attention, for one, becomes three: TokenDense QKV,
/// CausalAttention, TokenDense projection), and a tied head shares the first token
/// embedding's weights, so the arena and its initial draws follow the description's order.
std::vector<std::unique_ptr<Layer>> make_layers(const std::vector<LayerDesc>& descs);

}  // namespace starling
