#pragma once
// A model as a list of layers with their shapes: the one definition of an architecture.
// Each layer's kind is a row (learners/models/layer_row.h), which checks its options and gives its
// output shape.
// The Model is built from it (learners/models/model.h), and it is exported
// (learners/models/model_export.h).
#include "learners/models/layer_row.h"
#include "learners/models/model_spec.h"

#include <string>
#include <vector>

namespace starling {

/// A kind of model (model.kind): a preset that writes its layer list from the spec's sizes,
/// or "layers", the spec's own list. The one table of kinds: describe_model, the config's
/// choices and checks and `starling model` read it.
struct ModelKind {
  const char* name;
  /// The spec's layers with their shapes; throws ModelError.
  std::vector<LayerDesc> (*layers)(const ModelSpec& spec);
  bool preset;          // a choice of model.kind; "layers" is chosen by giving model.layers
  bool language_model;  // always on token ids ("layers": when its list starts with a token_embedding)
  /// The preset's sizes as the export writes them beside its layers (`, "blocks": 4`), and as
  /// `starling model`'s table heads them; nullptr: none.
  std::string (*sizes_json)(const ModelSpec& spec);
  std::string (*heading)(const ModelSpec& spec);
};

/// The kind named; nullptr when there is none.
const ModelKind* model_kind(const std::string& name);
/// The presets' names, model.kind's choices, in the table's order.
std::vector<std::string> model_preset_names();
/// The kind of a spec whose layers are its own list (model.layers).
inline constexpr const char kLayerListKind[] = "layers";
bool is_layer_list(const ModelSpec& spec);

/// The layers of a spec, with shapes: a preset's ("mlp", "cnn", "resnet8", "gpt") or, for kind
/// "layers", the spec's own list (its kinds, sizes, kernels, strides and paddings; shapes are
/// filled in). Throws ModelError on an unknown kind, a missing option or one out of its key's
/// range, what a layer's row refuses (a window larger than its input, heads that do not
/// divide the width, a sequence layer on a non-sequence, a tied head without a token
/// embedding, a vocabulary other than the classes), or a last layer whose output is not one
/// value per class (per token, for a language model).
std::vector<LayerDesc> describe_model(const ModelSpec& spec);

/// `layers` with their shapes filled in from `input`, a token_embedding's vocabulary 0 read as
/// `vocab`; throws ModelError as describe_model does (the last layer unchecked).
std::vector<LayerDesc> with_shapes(const std::vector<LayerDesc>& layers, Shape input, int vocab);

/// A language model: its first layer embeds tokens, and it gives logits per token.
bool is_language_model(const std::vector<LayerDesc>& layers);
/// A language model's kind, or a layer list that is a language model.
bool is_language_model(const ModelSpec& spec);

}  // namespace starling
