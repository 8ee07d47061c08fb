#pragma once
// The monitor from the command line: a peer's own (metrics and live page while it trains,
// [monitor] in the config) and `starling monitor`, the live page served apart from the
// peers, starting from one of them.
#include "cli/config.h"
#include "monitor/peer_monitor.h"

#include <memory>
#include <string>

namespace starling::cli {

/// Starts this peer's monitor when config.monitor.metrics_port is set (null otherwise) and
/// hooks it to the node's snapshots and the exchange's events (after the log's). Throws
/// ConfigError naming the port and where its key was set when the port cannot be bound.
std::unique_ptr<monitor::PeerMonitor> start_peer_monitor(Config& config, const std::string& tag);

struct MonitorOptions {
  std::string peer;  // HOST:PORT of any peer's monitor
  int port = 8080;   // where this page is served
  std::string bind = "127.0.0.1";
  double seconds = 0;  // stop after this long; 0: at SIGINT or SIGTERM
};

/// `starling monitor`: serves the live page, which starts from `peer`. Returns the exit code.
int run_monitor(const MonitorOptions& options);

}  // namespace starling::cli
