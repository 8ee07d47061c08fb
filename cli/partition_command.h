#pragma once
// `starling partition`: writes the configured partition of the training set across the
// peers as JSON, so another system (bench/torch_ddp.py) trains on the same parts without a
// second definition of the algorithm. The same checks as a run: a bad partition exits 2.
#include <string>
#include <vector>

namespace starling::cli {

struct PartitionOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string out;  // empty: standard output
};

/// Writes {"partition", "alpha", "classes_per_peer", "seed", "classes", "train_samples",
/// "peers": [{"id", "label_counts", "indices"}]} ("peers" empty for iid, which has no fixed
/// parts). Returns the exit code: 0 written, 1 data or file failure, 2 bad configuration.
int run_partition(const PartitionOptions& options);

}  // namespace starling::cli
