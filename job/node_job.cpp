// One node of a job, from its config to its summary (job/node_job.h).
#include "job/node_job.h"

#include "actors/backend_choice.h"
#include "actors/node.h"
#include "job/data_source.h"
#include "job/exit_codes.h"
#include "job/json.h"
#include "job/peer_monitor.h"
#include "job/progress.h"
#include "job/task_kind.h"
#include "learners/checkpoints/checkpoint.h"
#include "platform/cpu_features.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <fstream>
#include <thread>

namespace starling::job {
namespace {

// The backend as configured: "auto" until run_node has timed both.
std::string configured_backend_name(const actors::NodeSpec& node) {
  return node.choose_backend ? actors::kAutoBackendName : std::string(kernels::backend_name(node.train.learner.backend));
}

// Streams one CSV row per evaluation and the progress line; both survive a crash mid-run.
// A peer of an in-process job (quiet) logs its evaluations at debug level and reports its
// step to the launcher instead, which shows one progress line for all of them. The task's
// kind writes the rows and lines.
class MetricsObserver final : public TrainObserver {
 public:
  MetricsObserver(const Config& config, const std::string& csv_path, const PeerOutput* quiet, monitor::PeerMonitor* monitor)
      : config_(config), kind_(task_kind(config.data)), csv_(csv_path), progress_(config.run.name), quiet_(quiet),
        monitor_(monitor) {
    csv_ << kind_.metrics_columns() << "\n";
  }
  void on_step(int64_t step, int64_t total, double epoch, double loss, double rate) override {
    if (quiet_) {
      quiet_->step->store(step, std::memory_order_relaxed);
      quiet_->total->store(total, std::memory_order_relaxed);
    } else {
      progress_.update(step, total, epoch, loss, rate);
    }
  }
  void on_eval(const EvalPoint& p) override {
    progress_.clear();
    spdlog::log(quiet_ ? spdlog::level::debug : spdlog::level::info, "{}{}", quiet_ ? quiet_->tag : std::string(),
                kind_.evaluation_line(p, config_));
    csv_ << kind_.metrics_row(p, config_) << std::flush;
    if (monitor_) monitor_->on_eval(p);
  }
  // The rows up to the checkpoint; those the interrupted run wrote after it are redone.
  void on_resume(const TrainResult& restored) override {
    for (const auto& p : restored.history) csv_ << kind_.metrics_row(p, config_);
    csv_ << std::flush;
  }

 private:
  const Config& config_;
  const TaskKind& kind_;
  std::ofstream csv_;
  ProgressLine progress_;
  const PeerOutput* quiet_;
  monitor::PeerMonitor* monitor_;  // null: none
};

// Per neighbour under a robust aggregator: its mean and largest distance from this peer's
// model, and the fraction of rounds its difference was clipped.
JsonObject neighbour_report(const std::map<uint32_t, gossip::NeighbourStats>& neighbours) {
  JsonObject j;
  for (const auto& [id, s] : neighbours) {
    JsonObject one;
    const double rounds = static_cast<double>(std::max<std::uint64_t>(1, s.rounds));
    one.add("rounds", static_cast<long long>(s.rounds))
        .add("distance_mean", s.distance_sum / rounds)
        .add("distance_max", s.distance_max)
        .add("clipped_fraction", static_cast<double>(s.clipped) / rounds);
    j.add(std::to_string(id), one);
  }
  return j;
}

JsonObject drop_counts(const std::map<std::string, uint64_t>& drops) {
  JsonObject j;
  for (const auto& [reason, count] : drops) j.add(reason, static_cast<long long>(count));
  return j;
}

// The node's summary: what every run reports, then its task's metric.
JsonObject summarize(const Config& c, const actors::NodeResult& node, int64_t parameters) {
  const TrainResult& r = node.train;
  const EvalPoint& last = r.last();
  JsonObject j;
  j.add("run", c.run.name)
      .add("mode", gossip::exchange_mode_name(c.node.exchange.mode))
      .add("peers", static_cast<int>(std::max<std::size_t>(1, c.peers.size())))
      .add("peer_id", c.peers.empty() ? 0 : static_cast<long long>(c.peers[static_cast<std::size_t>(c.node.exchange.rank)].id))
      .add("learners_per_peer", node.learners)
      .add("intra_sync", actors::intra_sync_name(node.intra_sync))
      .add("sync_every", node.sync_every)
      .add("autotune_log", node.autotune_log)
      .add("model", c.node.train.learner.model.kind)
      .add("parameters", static_cast<long long>(parameters))
      .add("backend", std::string(kernels::backend_name(node.backend)))
      .add("isa", std::string(platform::isa_name(platform::active_isa())))
      .add("batch", c.node.train.learner.batch)
      .add("epochs", last.epoch)
      .add("steps", static_cast<long long>(r.steps))
      .add("samples", static_cast<long long>(r.samples))
      .add("wall_seconds", r.wall_seconds)
      .add("samples_per_second", r.samples / std::max(r.train_seconds, 1e-9))
      .add("train_loss", last.train_loss)
      .add("time_to_target_seconds", r.time_to_target_seconds)
      .add("compute_seconds", node.compute_seconds)
      .add("imbalance_seconds", node.imbalance_seconds)
      .add("sync_seconds", node.sync_seconds)
      .add("exchange_seconds", node.exchange_seconds)
      .add("bytes_sent", static_cast<long long>(node.bytes_sent))
      .add("bytes_received", static_cast<long long>(node.bytes_received))
      .add("control_messages_sent", static_cast<long long>(node.control_messages_sent))
      .add("control_messages_received", static_cast<long long>(node.control_messages_received))
      .add("model_checksum", r.model_checksum)
      .add("partition", partition_name(c.data.partition.kind))
      .add("resumed_from_step", node.resumed_from.empty() ? std::nullopt
                                                          : std::optional<double>(static_cast<double>(node.resumed_from_step)));
  task_kind(c.data).summarize(j, c, node);
  if (c.node.exchange.mode == gossip::ExchangeMode::none) return j;
  std::vector<std::string> members;
  for (uint32_t id : node.members) members.push_back(std::to_string(id));
  j.add("joined_at_step", node.joined_at_step ? std::optional<double>(static_cast<double>(*node.joined_at_step)) : std::nullopt)
      .add("view_changes", static_cast<long long>(node.view_changes))
      .add("members_at_end", members)
      .add("drops", drop_counts(node.drops));
  JsonObject check, digests;  // gossip/control/state_hashes.h
  for (const auto& [round, digest] : node.state_check.recent) digests.add(std::to_string(round), gossip::digest_text(digest));
  check.add("rounds_checked", static_cast<long long>(node.state_check.rounds_checked))
      .add("disagreements", static_cast<long long>(node.state_check.disagreements))
      .add("heals", static_cast<long long>(node.state_check.heals))
      .add("state_hash", digests);
  j.add("state_check", check);
  if (c.node.overlap) j.add("overlapped_seconds", node.overlapped_seconds);
  const gossip::AttackSpec& attack = c.peers.empty() ? gossip::AttackSpec{} : c.peers[static_cast<std::size_t>(c.node.exchange.rank)].attack;
  j.add("attack", std::string(gossip::attack_name(attack.kind)))
      .add("aggregator", std::string(gossip::aggregator_name(c.node.exchange.aggregator.kind)))
      .add("neighbours", neighbour_report(node.neighbours));
  return j;
}

// The index into the peer list that a cluster launcher gives this process, if any.
std::optional<std::size_t> launcher_rank() {
  for (const char* name : {"STARLING_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"})
    if (const char* value = std::getenv(name); value && *value) return static_cast<std::size_t>(std::stoul(value));
  return std::nullopt;
}

}  // namespace

void log_exchange_events(gossip::ExchangeSpec& exchange, const std::string& tag) {
  exchange.on_refusal = [tag](const std::string& line) { spdlog::warn("{}security: {}", tag, line); };
  exchange.on_adjust = [tag](const std::string& line) { spdlog::info("{}compression: {}", tag, line); };
  exchange.on_event = [tag](const std::string& line) { spdlog::info("{}peers: {}", tag, line); };
  exchange.on_warning = [tag](const std::string& line) { spdlog::warn("{}peers: {}", tag, line); };
}

int train_on(Config config, std::shared_ptr<const Task> task, const std::string& summary, const PeerOutput* quiet) {
  const std::string tag = quiet ? quiet->tag : std::string();
  const auto level = quiet ? spdlog::level::debug : spdlog::level::info;
  const TaskKind& kind = task_kind(config.data);
  log_exchange_events(config.node.exchange, tag);
  std::unique_ptr<monitor::PeerMonitor> watch;
  try {
    watch = start_peer_monitor(config, tag);
  } catch (const ConfigError& e) {
    spdlog::error("{}{}", tag, e.what());
    return 2;
  }
  try {
    const int64_t parameters = static_cast<int64_t>(Model(config.node.train.learner.model).trainable_count());
    spdlog::log(level, "{}run '{}': {} model, {} parameters, {} learner(s) ({}), batch {}, backend {} ({}), exchange {}, {}",
                 tag, config.run.name, config.node.train.learner.model.kind, parameters,
                 config.node.learners > 0 ? std::to_string(config.node.learners) : std::string("auto"),
                 actors::intra_sync_name(config.node.intra_sync), config.node.train.learner.batch,
                 configured_backend_name(config.node), platform::isa_name(platform::active_isa()),
                 gossip::exchange_mode_name(config.node.exchange.mode), kind.length(config));
    if (!config.peers.empty() && config.peers[static_cast<std::size_t>(config.node.exchange.rank)].attack.on())
      spdlog::warn("{}this peer ATTACKS ({}): it sends crafted models to its honest neighbours", tag,
                   gossip::attack_name(config.peers[static_cast<std::size_t>(config.node.exchange.rank)].attack.kind));
    const std::string csv = config.run.out_dir + "/" + config.run.name + ".metrics.csv";
    ensure_parent_dir(csv);
    MetricsObserver observer(config, csv, quiet, watch.get());
    const actors::NodeResult node = actors::run_node(config.node, std::move(task), observer);
    const TrainResult& result = node.train;
    const std::string summary_path =
        summary.empty() ? config.run.out_dir + "/" + config.run.name + ".summary.json" : summary;
    write_file_atomic(summary_path, summarize(config, node, parameters).str() + "\n");
    spdlog::log(level, "{}done: {}; summary {}", tag, kind.outcome(config, node), summary_path);
    if (const double target = kind.target(config); target > 0) {
      if (result.time_to_target_seconds)
        spdlog::log(level, "{}target {:.4f}{} reached after {:.1f} s", tag, target, kind.target_unit(),
                    *result.time_to_target_seconds);
      else
        spdlog::log(quiet ? spdlog::level::debug : spdlog::level::warn, "{}target {:.4f}{} not reached", tag, target,
                    kind.target_unit());
    }
    if (watch && config.monitor.linger_seconds > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(config.monitor.linger_seconds));
    return 0;
  } catch (const CheckpointMismatch& e) {
    spdlog::error("{}{}", tag, e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}{}", tag, e.what());
    return 1;
  }
}

void select_peer(Config& config, std::optional<uint32_t> id) {
  if (config.node.exchange.mode == gossip::ExchangeMode::none)
    throw ConfigError(config.source + ": exchange.mode: a peer needs an exchange mode other than \"none\"");
  std::size_t rank = 0;
  if (id) {
    const auto it = std::find_if(config.peers.begin(), config.peers.end(), [&](const PeerEntry& p) { return p.id == *id; });
    if (it == config.peers.end()) throw ConfigError(config.source + ": no [[peer]] with id " + std::to_string(*id));
    rank = static_cast<std::size_t>(it - config.peers.begin());
  } else if (config.allocation_rank) {
    rank = *config.allocation_rank;  // the allocation's own numbering, which the endpoints follow
  } else if (const auto from_env = launcher_rank()) {
    if (*from_env >= config.peers.size())
      throw ConfigError("rank " + std::to_string(*from_env) + " from the launcher's environment, but " + config.source +
                        " lists " + std::to_string(config.peers.size()) + " peers");
    rank = *from_env;
  } else {
    throw ConfigError("starling peer: give --id, or run under a launcher that sets STARLING_RANK, SLURM_PROCID or OMPI_COMM_WORLD_RANK");
  }
  config.node.exchange.rank = static_cast<int>(rank);
  config.node.train.learner.flip_labels = config.peers[rank].attack.kind == gossip::Attack::label_flip;
  if (config.peers[rank].learners > 0) config.node.learners = config.peers[rank].learners;
  config.run.name += "-peer" + std::to_string(config.peers[rank].id);
  // Peers started from one config must not share a checkpoint folder.
  if (!config.node.checkpoint_dir.empty())
    config.node.checkpoint_dir += "/peer" + std::to_string(config.peers[rank].id);
}

int run_node_job(Config config, const std::string& summary) {
  return exit_code_of([&] {
    kernels::set_threads(config.kernel_threads);
    const PeerTasks tasks = task_kind(config.data).load(config);
    const std::shared_ptr<const Task> task = tasks(config);
    return train_on(std::move(config), task, summary, nullptr);
  });
}


}  // namespace starling::job
