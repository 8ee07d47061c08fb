#include "job/trained_model.h"

#include "job/task_kind.h"
#include "learners/checkpoints/checkpoint.h"
#include "learners/models/nanogpt_weights.h"

#include <spdlog/spdlog.h>

namespace starling::job {
namespace {

// The checkpoint `path` names, or the newest valid one of the config's folder (unusable
// files skipped with a warning); which model it holds is checked by the caller.
Checkpoint find_checkpoint(const Config& config, const std::string& path) {
  if (!path.empty()) return read_checkpoint(path);
  const std::string& dir = config.node.checkpoint_dir;
  if (dir.empty())
    throw ConfigError(config.source + ": run.checkpoint_dir: not set, and no --checkpoint given: no trained model to read");
  for (const std::string& file : list_checkpoints(dir)) {
    try {
      Checkpoint checkpoint = read_checkpoint(file);
      spdlog::info("reading the model of {}", file);
      return checkpoint;
    } catch (const CheckpointError& e) {
      spdlog::warn("skipping {}", e.what());
    }
  }
  throw ConfigError(config.source + ": run.checkpoint_dir: no usable checkpoint in " + dir + " (train first)");
}

// The entry of `fingerprint` named `key`, empty when absent.
std::string entry(const Fingerprint& fingerprint, const std::string& key) {
  for (const auto& [k, v] : fingerprint)
    if (k == key) return v;
  return "";
}

void load_checkpoint(const Config& config, const std::string& path, Model& model) {
  const std::string wanted = model.spec().kind + " " + model.signature();
  const Checkpoint checkpoint = find_checkpoint(config, path);
  const std::string saved = entry(checkpoint.fingerprint, "model");
  if (saved != wanted)
    throw ConfigError(config.source + ": model: the checkpoint holds " + (saved.empty() ? "no model" : saved) +
                      ", this config " + wanted);
  SectionReader central = checkpoint.reader("central");
  central.floats(model.params(), model.param_count());
  central.finish();
}

// Loads the nanoGPT-named weights of the safetensors file `path` into `model`; a file that
// cannot be read or holds another model is a ConfigError, prefixed with `where` when given.
void load_safetensors(const std::string& path, const std::string& where, Model& model) {
  const std::string prefix = where.empty() ? "" : where + ": ";
  TensorFile file;
  try {
    file = read_safetensors(path);
  } catch (const SafetensorsError& e) {  // its message names the file
    throw ConfigError(prefix + e.what());
  }
  try {
    import_nanogpt(file, model);
  } catch (const std::exception& e) {  // a file of another model
    throw ConfigError(prefix + path + ": " + e.what());
  }
}

}  // namespace

bool is_safetensors_path(const std::string& path) {
  const std::string suffix = ".safetensors";
  return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::unique_ptr<Model> load_trained_model(const Config& config, const std::string& source) {
  const ModelSpec& spec = config.node.train.learner.model;
  task_kind(config.data).check_generates(config);
  auto model = std::make_unique<Model>(spec);
  if (is_safetensors_path(source))
    load_safetensors(source, "", *model);
  else
    load_checkpoint(config, source, *model);
  return model;
}

void apply_init_from(Config& config) {
  if (config.run.init_from.empty()) return;
  ModelSpec& spec = config.node.train.learner.model;
  Model model(spec);
  load_safetensors(config.run.init_from, config.run.init_from_at, model);
  spec.initial = std::make_shared<const std::vector<float>>(model.params(), model.params() + model.param_count());
  spdlog::info("starting from the weights of {}", config.run.init_from);
}

}  // namespace starling::job
