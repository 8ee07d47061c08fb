#pragma once
// `starling model`: the architecture a config trains, fitted to its data set — as a table of
// layers, as the JSON that the PyTorch references build their model from, or as the
// config's [[model.layers]] tables that build the same model (a preset written out).
#include <string>
#include <vector>

namespace starling::cli {

struct ModelOptions {
  std::string config;
  std::vector<std::string> overrides;
  bool json = false;
  bool layers = false;  // print the model as a [model] section with its layer list
};

/// Returns the exit code: 0 printed, 1 the data could not be read, 2 bad configuration.
int run_model(const ModelOptions& options);

}  // namespace starling::cli
