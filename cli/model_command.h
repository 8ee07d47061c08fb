#pragma once
// `starling model`: the architecture a config trains, fitted to its data set — as a table of
// layers, or as the JSON that the PyTorch references build their model from.
#include <string>
#include <vector>

namespace starling::cli {

struct ModelOptions {
  std::string config;
  std::vector<std::string> overrides;
  bool json = false;
};

/// Returns the exit code: 0 printed, 1 the data could not be read, 2 bad configuration.
int run_model(const ModelOptions& options);

}  // namespace starling::cli
