#pragma once
// `starling train` (one process, one node) and `starling peer` (one peer of a multi-peer
// job): load the config and the data, train, write the metrics CSV and the summary JSON.
#include "cli/config.h"
#include "job/swarm_peer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace starling::cli {

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string summary;  // empty: <out_dir>/<name>.summary.json
  bool resume = false;  // continue from the newest valid checkpoint in run.checkpoint_dir
  bool join = false;    // peer: join the running job (it also does when it finds one running)
  int metrics_port = 0;  // --metrics-port: sets monitor.metrics_port; 0: as the config says
  job::SwarmPeerOptions swarm;  // peer: an open swarm's (--listen set), else a roster's
  std::string fault;  // peer: --fault, a misbehaviour for tests (job/peer_fault.h); empty: none
};

/// `--resume`: every node continues from its newest valid checkpoint; ConfigError when the
/// config names no run.checkpoint_dir to resume from.
void apply_resume(Config& config, bool resume);

/// Returns the process exit code: 0 done, 1 failed while running, 2 bad configuration.
int run_train(const TrainOptions& options);

/// One peer: `id` picks the [[peer]], else the launcher's rank (STARLING_RANK, SLURM_PROCID,
/// OMPI_COMM_WORLD_RANK) indexes the list. Same exit codes.
int run_peer(const TrainOptions& options, std::optional<uint32_t> id);

}  // namespace starling::cli
