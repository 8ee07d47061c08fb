// A model's description as JSON and as TOML layer tables (learners/models/model_export.h).
#include "learners/models/model_export.h"

#include "learners/models/model.h"
#include "learners/models/model_description.h"

namespace starling {
namespace {

std::string shape_json(Shape s) {
  return "[" + std::to_string(s.h) + ", " + std::to_string(s.w) + ", " + std::to_string(s.c) + "]";
}

std::string layers_json(const std::vector<LayerDesc>& layers, const std::string& indent);

std::string layer_json(const LayerDesc& d, const std::string& indent) {
  std::string out = "{\"kind\": \"" + std::string(d.kind()) + "\", \"in\": " + shape_json(d.in) +
                    ", \"out\": " + shape_json(d.out);
  if (d.row->json) out += d.row->json(d);
  if (d.row->nested)
    out += ", \"body\": " + layers_json(d.body, indent + "  ") + ", \"shortcut\": " + layers_json(d.shortcut, indent + "  ");
  return out + "}";
}

std::string layers_json(const std::vector<LayerDesc>& layers, const std::string& indent) {
  std::string out = "[";
  for (std::size_t i = 0; i < layers.size(); ++i) out += (i ? ",\n" : "\n") + indent + layer_json(layers[i], indent);
  return out + (layers.empty() ? "]" : "\n" + indent.substr(2) + "]");
}

// One [[name]] table with the keys its kind takes, its body and shortcut as sub-tables after
// them (TOML puts a table's keys before its sub-tables).
std::string layer_toml(const LayerDesc& d, const std::string& name) {
  std::string out = "\n[[" + name + "]]\nkind = \"" + std::string(d.kind()) + "\"\n";
  if (d.row->toml) out += d.row->toml(d);
  for (const LayerDesc& b : d.body) out += layer_toml(b, name + ".body");
  for (const LayerDesc& b : d.shortcut) out += layer_toml(b, name + ".shortcut");
  return out;
}

}  // namespace

std::string layers_toml(const ModelSpec& spec) {
  const std::vector<LayerDesc> layers = describe_model(spec);
  std::string out = "[model]\n";
  if (is_language_model(layers)) out += "context = " + std::to_string(layers.front().in.w) + "\n";
  for (const LayerDesc& d : layers) out += layer_toml(d, "model.layers");
  return out;
}

std::string model_json(const ModelSpec& spec) {
  const std::vector<LayerDesc> layers = describe_model(spec);
  std::string out = "{\"kind\": \"" + spec.kind + "\"";
  const ModelKind* kind = model_kind(spec.kind);
  if (kind->sizes_json) out += kind->sizes_json(spec);  // the preset's sizes, beside the layers they expand into
  if (is_language_model(layers))
    out += ", \"context\": " + std::to_string(layers.front().in.w) + ", \"vocab\": " + std::to_string(spec.classes);
  out += ", \"input\": " + shape_json(layers.front().in) + ", \"classes\": " + std::to_string(spec.classes) +
         ", \"parameters\": " + std::to_string(Model(spec).trainable_count()) + ", \"layers\": ";
  return out + layers_json(layers, "  ") + "}";
}

}  // namespace starling
