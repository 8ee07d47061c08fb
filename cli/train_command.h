#pragma once
// `starling train`: one process, one node; loads the config, the data, trains, writes the
// metrics CSV and the summary JSON.
#include <string>
#include <vector>

namespace starling::cli {

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string summary;  // empty: <out_dir>/<name>.summary.json
};

/// Returns the process exit code: 0 done, 1 failed while running, 2 bad configuration.
int run_train(const TrainOptions& options);

}  // namespace starling::cli
