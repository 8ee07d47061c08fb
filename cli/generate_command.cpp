#include "cli/generate_command.h"

#include "cli/config.h"
#include "cli/exit_codes.h"
#include "cli/task_kind.h"
#include "learners/checkpoint.h"
#include "learners/model.h"
#include "learners/text_sampling.h"

#include <cstdio>

namespace starling::cli {
namespace {

// The checkpoint the options name, or the newest valid one of the config's folder
// (unusable files skipped with a warning); which model it holds is checked by the caller.
Checkpoint find_checkpoint(const GenerateOptions& options, const Config& config) {
  if (!options.checkpoint.empty()) return read_checkpoint(options.checkpoint);
  const std::string& dir = config.node.checkpoint_dir;
  if (dir.empty())
    throw ConfigError(config.source + ": run.checkpoint_dir: not set, and no --checkpoint given: nothing to sample from");
  for (const std::string& path : list_checkpoints(dir)) {
    try {
      Checkpoint checkpoint = read_checkpoint(path);
      spdlog::info("sampling from {}", path);
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

}  // namespace

int run_generate(const GenerateOptions& options) {
  return exit_code_of([&] {
    const Config config = load_config(options.config, options.overrides);
    const ModelSpec& spec = config.node.train.learner.model;
    task_kind(config.data).check_generates(config);
    if (options.bytes < 0 || options.temperature < 0)
      throw ConfigError(options.bytes < 0 ? "--bytes: expected 0 or more" : "--temperature: expected 0 or more");
    Model model(spec);
    const Fingerprint wanted = {{"model", spec.kind + " " + model.signature()}};
    const Checkpoint checkpoint = find_checkpoint(options, config);
    const std::string saved = entry(checkpoint.fingerprint, "model");
    if (saved != wanted.front().second)
      throw ConfigError(config.source + ": model: the checkpoint holds " + (saved.empty() ? "no model" : saved) +
                        ", this config " + wanted.front().second);
    SectionReader central = checkpoint.reader("central");
    central.floats(model.params(), model.param_count());
    central.finish();
    const SamplingSpec sampling{options.bytes, options.temperature, options.seed};
    const std::string text = sample_text(model, config.node.train.learner.backend, options.prompt, sampling);
    std::fwrite(options.prompt.data(), 1, options.prompt.size(), stdout);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  });
}

}  // namespace starling::cli
