#pragma once
// The language model a config trained, with its weights: from a checkpoint of the config's
// run (the newest valid one in run.checkpoint_dir, or a named file), or from a safetensors
// file with nanoGPT's names (learners/models/nanogpt_weights.h), such as `starling export` or
// PyTorch writes. What `generate` samples from and `export` writes out; and the weights a
// run starts from with run.init_from.
#include "job/config.h"
#include "learners/models/model.h"

#include <memory>
#include <string>

namespace starling::job {

/// `source`: empty (the newest checkpoint of the config's folder), a checkpoint file, or a
/// file ending in ".safetensors". Throws ConfigError when the config trains no language
/// model, names no checkpoint folder, or the file holds another model (naming the tensor or
/// the fingerprint); CheckpointError when a named checkpoint cannot be read.
std::unique_ptr<Model> load_trained_model(const Config& config, const std::string& source);

/// With run.init_from set: reads that safetensors file into the config's model spec as its
/// initial weights (ModelSpec::initial), so that training starts from them. Throws
/// ConfigError naming run.init_from's file:line and the tensor at fault.
void apply_init_from(Config& config);

/// Whether `path` names a safetensors file (by its extension).
bool is_safetensors_path(const std::string& path);

}  // namespace starling::job
