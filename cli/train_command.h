#pragma once
// `starling train` (one process, one node) and `starling peer` (one peer of a multi-peer
// job): load the config and the data, train, write the metrics CSV and the summary JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace starling::cli {

/// The columns of `<out_dir>/<name>.metrics.csv`, one row per evaluation (EvalPoint); an
/// unmeasured cell is empty. bench/torch_ddp.py writes the same columns.
inline constexpr const char* kMetricsColumns =
    "step,epoch,wall_seconds,samples,train_loss,test_accuracy,test_loss,samples_per_second,bytes_sent,"
    "bytes_received,compute_seconds,exchange_seconds,wait_seconds,staleness,consensus_distance";

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string summary;  // empty: <out_dir>/<name>.summary.json
  bool resume = false;  // continue from the newest valid checkpoint in run.checkpoint_dir
  bool join = false;    // peer: join the running job (it also does when it finds one running)
};

/// Returns the process exit code: 0 done, 1 failed while running, 2 bad configuration.
int run_train(const TrainOptions& options);

/// One peer: `id` picks the [[peer]], else the launcher's rank (STARLING_RANK, SLURM_PROCID,
/// OMPI_COMM_WORLD_RANK) indexes the list. Same exit codes.
int run_peer(const TrainOptions& options, std::optional<uint32_t> id);

}  // namespace starling::cli
