#pragma once
// `starling generate`: prints a sample from a language model trained by `starling train`,
// read from the central model of a node's checkpoint (actors/node_checkpoint.h): the prompt, then the bytes drawn after it.
#include <cstdint>
#include <string>
#include <vector>

namespace starling::cli {

struct GenerateOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string checkpoint;  // empty: the newest valid one in the config's run.checkpoint_dir
  std::string prompt;
  int bytes = 256;
  double temperature = 0.8;
  uint64_t seed = 1;
};

/// Returns the exit code: 0 printed, 1 an unreadable checkpoint, 2 a bad configuration or a
/// checkpoint of another model.
int run_generate(const GenerateOptions& options);

}  // namespace starling::cli
