#pragma once
// `starling train` (one process, one node) and `starling peer` (one peer of a multi-peer
// job): load the config and the data, train, write the metrics CSV and the summary JSON.
#include "cli/config.h"
#include "cli/swarm_peer.h"
#include "learners/task.h"

#include <atomic>
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
  SwarmPeerOptions swarm;  // peer: an open swarm's (--listen set), else a roster's
};

/// How a peer of an in-process job (cli/in_process_launch.h) reports: its log lines start
/// with `tag`, and it stores its step and step count here instead of drawing a progress line.
struct PeerOutput {
  std::string tag;
  std::atomic<int64_t>* step = nullptr;
  std::atomic<int64_t>* total = nullptr;
};

/// Sends the exchange's news to the log, each line after `tag`: refused strangers (warnings),
/// compression's adjustments, and view changes, deaths, stragglers and drops.
void log_exchange_events(gossip::ExchangeSpec& exchange, const std::string& tag);

/// `--resume`: every node continues from its newest valid checkpoint; ConfigError when the
/// config names no run.checkpoint_dir to resume from.
void apply_resume(Config& config, bool resume);

/// Trains one node from a validated config on its task (cli/task_kind.h: the data loaded,
/// the model fitted to it, config.node given this peer's part): the metrics CSV (the task
/// kind's columns, one row per evaluation; bench/torch_ddp.py and bench/torch_ddp_text.py
/// write the same), the summary (empty path: the default one). `quiet`, when given, makes it
/// a peer of an in-process job. Returns the exit code.
int train_on(Config config, std::shared_ptr<const Task> task, const std::string& summary, const PeerOutput* quiet);

/// Makes `config` the config of one peer: `id` picks the [[peer]], else the launcher's rank
/// from the environment; then its rank, learner count, name and files. Throws ConfigError.
void select_peer(Config& config, std::optional<uint32_t> id);

/// Returns the process exit code: 0 done, 1 failed while running, 2 bad configuration.
int run_train(const TrainOptions& options);

/// One peer: `id` picks the [[peer]], else the launcher's rank (STARLING_RANK, SLURM_PROCID,
/// OMPI_COMM_WORLD_RANK) indexes the list. Same exit codes.
int run_peer(const TrainOptions& options, std::optional<uint32_t> id);

}  // namespace starling::cli
