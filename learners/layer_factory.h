#pragma once
// Layers from their descriptions (learners/model_description.h), residual blocks included.
#include "learners/layer.h"
#include "learners/model_description.h"

#include <memory>
#include <vector>

namespace starling {

/// The layer a description names, with the shapes it records.
std::unique_ptr<Layer> make_layer(const LayerDesc& d);

/// make_layer over a list, in order.
std::vector<std::unique_ptr<Layer>> make_layers(const std::vector<LayerDesc>& descs);

}  // namespace starling
