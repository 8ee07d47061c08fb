#pragma once
// One node of a job, from its config (job/config.h, validated) to its metrics CSV and
// summary JSON: the node a `starling train` runs, one peer of `starling peer`, or one thread
// of an in-process job (job/in_process_launch.h).
#include "job/config.h"
#include "learners/tasks/task.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace starling::job {

/// How a peer of an in-process job (job/in_process_launch.h) reports: its log lines start
/// with `tag`, and it stores its step and step count here instead of drawing a progress line.
struct PeerOutput {
  std::string tag;
  std::atomic<int64_t>* step = nullptr;
  std::atomic<int64_t>* total = nullptr;
};

/// Sends the exchange's news to the log, each line after `tag`: refused strangers (warnings),
/// compression's adjustments, and view changes, deaths, stragglers and drops.
void log_exchange_events(gossip::ExchangeSpec& exchange, const std::string& tag);

/// Trains one node from a validated config on its task (job/task_kind.h: the data loaded,
/// the model fitted to it, config.node given this peer's part): the metrics CSV (the task
/// kind's columns, one row per evaluation; bench/torch_ddp.py and bench/torch_ddp_text.py
/// write the same), the summary (empty path: the default one). `quiet`, when given, makes it
/// a peer of an in-process job. Returns the exit code.
int train_on(Config config, std::shared_ptr<const Task> task, const std::string& summary, const PeerOutput* quiet);

/// Loads the config's data (its task kind's), fits the model to it and trains the node
/// (train_on): a whole job, or one peer of one. A ConfigError here is a model the data does
/// not fit, or a split of it that leaves a peer without data. Returns the exit code.
int run_node_job(Config config, const std::string& summary);

/// Makes `config` the config of one peer: `id` picks the [[peer]], else the launcher's rank
/// from the environment; then its rank, learner count, name and files. Throws ConfigError.
void select_peer(Config& config, std::optional<uint32_t> id);

}  // namespace starling::job
