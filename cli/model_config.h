#pragma once
// The [model] section's layer list (`layers = [{ kind = "conv2d", size = 32, kernel = 5 },
// { kind = "relu" }, ...]`), which stands instead of a preset (`kind`, `hidden`: schema rows),
// and the model checked against the data set's shape and class count where the config names
// a set of known shape.
#include "cli/config.h"
#include "learners/models/model_memory.h"

#include <toml++/toml.h>

#include <set>
#include <string>

namespace starling::cli {

/// Fills `model`'s layer list when the config gives one (its preset keys are read already);
/// a bad key, an unknown layer kind, a non-positive size, a window larger than
/// its input or a last layer that does not give one value per class is a ConfigError naming
/// the file, the line and the key (model.layers[i].key).
void read_model(const toml::table& root, const std::string& file, const std::set<std::string>& overridden,
                const DataOptions& data, ModelSpec& model);

/// The memory training the config's model needs, at least (learners/models/model_memory.h): its
/// parameters, gradients and optimizer state on every learner, and the activations of a
/// batch; `learners` counts what node.learners = "auto" may reach (every core).
struct TrainingMemory {
  double bytes = 0;
  int learners = 1;
  std::vector<PartMemory> parts;
  int largest = -1;  // the part that needs the most, in `parts`
};
TrainingMemory training_memory(const Config& c);

/// Refuses a model whose parameters, gradients, optimizer state and activations
/// (learners/models/model_memory.h) exceed this machine's physical memory, before anything is
/// allocated: a ConfigError naming the largest part's key (model.layers[i], model.hidden,
/// model.width, ...) and its line.
void check_model_memory(const toml::table& root, const std::string& file, const Config& c);
}  // namespace starling::cli
