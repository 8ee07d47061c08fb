#include "cli/train_command.h"

#include "cli/config.h"
#include "job/node_job.h"
#include "job/peer_fault.h"

#include <spdlog/spdlog.h>

namespace starling::cli {

void apply_resume(Config& config, bool resume) {
  if (resume && config.node.checkpoint_dir.empty())
    throw ConfigError("--resume: " + config.source + " sets no run.checkpoint_dir to resume from");
  config.node.resume = resume;
}

// --metrics-port overrides monitor.metrics_port, and errors about the port name it.
void apply_metrics_port(Config& config, int port) {
  if (port == 0) return;
  config.monitor.metrics_port = port;
  config.monitor.port_at = "--metrics-port";
}

int run_train(const TrainOptions& options) {
  Config config;
  try {
    config = load_config(options.config, options.overrides);
    apply_metrics_port(config, options.metrics_port);
    apply_resume(config, options.resume);
    if (config.node.exchange.mode != gossip::ExchangeMode::none)
      throw ConfigError(options.config + ": exchange.mode: `starling train` runs one node; use `starling launch` or `starling peer` for \"" +
                        gossip::exchange_mode_name(config.node.exchange.mode) + "\"");
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  return job::run_node_job(config, options.summary);
}

int run_peer(const TrainOptions& options, std::optional<uint32_t> id) {
  Config config;
  try {
    config = load_config(options.config, options.overrides);
    apply_metrics_port(config, options.metrics_port);
    job::inject_fault(config, options.fault);  // before a swarm admits this peer
    if (!options.swarm.listen.empty()) job::join_swarm(config, job_description(options.config, options.overrides), options.swarm);
    else job::select_peer(config, id);
    if (config.allocation_rank) {
      const auto rank = static_cast<std::size_t>(config.node.exchange.rank);
      spdlog::info("peer {} of {} from the {} allocation, at {} (the first at {}, the last at {})", config.peers[rank].id,
                   config.peers.size(), config.launch.endpoints, config.peers[rank].endpoint,
                   config.peers.front().endpoint, config.peers.back().endpoint);
    }
    apply_resume(config, options.resume);
    config.node.exchange.join = config.node.exchange.join || options.join;  // a swarm newcomer joins
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const job::SwarmJoinError& e) {
    spdlog::error("join: {}", e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("bad rank in the environment: {}", e.what());
    return 2;
  }
  return job::run_node_job(config, options.summary);
}

}  // namespace starling::cli
