#pragma once
// A model's description written out: as JSON (`starling model --json`) for the PyTorch
// references, which build the same architecture from the export, and as the config's layer
// tables (`starling model --layers`).
#include "learners/models/model_spec.h"

#include <string>

namespace starling {

/// The spec's layers as the config's `[[model.layers]]` tables (TOML), each key its kind
/// takes written out, so that a config with them builds the same model, bit for bit.
std::string layers_toml(const ModelSpec& spec);

/// {"kind": ..., "input": [h, w, c], "classes": n, "parameters": trainable count,
///  "layers": [{"kind": ..., "in": [...], "out": [...], ...}]}; a language model adds its
/// "context" and "vocab", and "gpt" its sizes: "blocks", "heads", "width", "bias", "tied_head".
std::string model_json(const ModelSpec& spec);

}  // namespace starling
