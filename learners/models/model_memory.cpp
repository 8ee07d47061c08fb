#include "learners/models/model_memory.h"

#include "learners/models/gpt.h"
#include "learners/models/model_description.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace starling {
namespace {

// Trainable floats of one described layer (a residual block's body and shortcut included).
double layer_parameters(const LayerDesc& d) {
  double sum = d.row->parameters ? d.row->parameters(d) : 0.0;
  for (const LayerDesc& b : d.body) sum += layer_parameters(b);
  for (const LayerDesc& s : d.shortcut) sum += layer_parameters(s);
  return sum;
}

double layer_activations(const LayerDesc& d) {
  double sum = static_cast<double>(d.out.size()) + (d.row->activations ? d.row->activations(d) : 0.0);
  for (const LayerDesc& b : d.body) sum += layer_activations(b);
  for (const LayerDesc& s : d.shortcut) sum += layer_activations(s);
  return sum;
}

std::string layer_what(const LayerDesc& d) {
  if (d.row->what) return d.row->what(d);
  std::ostringstream s;
  s << d.kind() << " on " << d.in.h << "×" << d.in.w << "×" << d.in.c;
  return s.str();
}

// The key of a preset that sizes its k-th described layer: an MLP's hidden layers come
// from model.hidden, everything else of a preset from model.kind.
std::string preset_key(const ModelSpec& spec, const std::vector<LayerDesc>& layers, std::size_t k) {
  if (is_layer_list(spec)) return "layers";
  if (spec.kind != "mlp" || layers[k].kind() != "dense") return "kind";
  std::size_t dense_before = 0;
  for (std::size_t i = 0; i < k; ++i) dense_before += layers[i].kind() == "dense";
  return dense_before < spec.hidden.size() ? "hidden" : "kind";
}

std::vector<PartMemory> gpt_parts(const ModelSpec& spec) {
  const GptSpec g = gpt_spec(spec);
  const double w = g.width, t = g.context, v = g.vocab, n = g.layers;
  const std::string shape = std::to_string(g.layers) + " blocks of width " + std::to_string(g.width);
  // A block is its attention and MLP residuals, the description's third and fourth layers;
  // it keeps about 16 floats of width per token for its backward.
  const std::vector<LayerDesc> layers = with_shapes(gpt_description(g), Shape{1, g.context, 1}, g.vocab);
  const double block = layer_parameters(layers[2]) + layer_parameters(layers[3]);
  return {
      {-1, "width", "token and position embeddings of width " + std::to_string(g.width), v * w + t * w, t * w},
      {-1, "blocks", shape, n * block, n * 16 * t * w},
      {-1, "context", "causal attention over a context of " + std::to_string(g.context) + " in " + shape, 0,
       n * g.heads * t * t},
      {-1, "context", "the head's logits over " + std::to_string(g.vocab) + " bytes at " + std::to_string(g.context) + " positions",
       2 * w, 2 * t * v},
  };
}

}  // namespace

double MemoryUse::part_bytes(const PartMemory& part) const {
  // Per learner: parameters, gradients and the optimizer's slots; per node: z with its
  // gradients, z_prev, the scratch arena and its optimizer's slots. Activations and their
  // gradients per sample of every learner's batch and of a validation forward (whose
  // layers hold the same buffers).
  const double per_parameter = static_cast<double>(learners) * (2 + optimizer_slots) + 4 + node_slots;
  const double per_activation = 2.0 * (static_cast<double>(batch) * learners + evaluation_batch);
  return sizeof(float) * (part.parameters * per_parameter + part.activations_per_sample * per_activation);
}

std::vector<PartMemory> estimate_memory(const ModelSpec& spec) {
  if (spec.kind == kGptKind) return gpt_parts(spec);
  const std::vector<LayerDesc> layers = describe_model(spec);
  std::vector<PartMemory> parts;
  for (std::size_t k = 0; k < layers.size(); ++k)
    parts.push_back({static_cast<int>(k), preset_key(spec, layers, k), layer_what(layers[k]), layer_parameters(layers[k]),
                     layer_activations(layers[k])});
  return parts;
}

int optimizer_slots(const std::string& kind, double momentum) {
  if (kind == "adam" || kind == "adamw") return 2;
  return momentum > 0 ? 1 : 0;
}

double physical_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string name, unit;
  double kib = 0;
  while (meminfo >> name >> kib >> unit)
    if (name == "MemTotal:") return kib * 1024.0;
  return 0;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) bytes /= 1024.0, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

}  // namespace starling
