#pragma once
// A peer's own monitor: its metrics and live page while it trains ([monitor] in the config,
// docs/monitoring.md).
#include "job/config.h"
#include "monitor/peer_monitor.h"

#include <memory>
#include <string>

namespace starling::job {

/// Starts this peer's monitor when config.monitor.metrics_port is set (null otherwise) and
/// hooks it to the node's snapshots and the exchange's events (after the log's). Throws
/// ConfigError naming the port and where its key was set when the port cannot be bound.
std::unique_ptr<monitor::PeerMonitor> start_peer_monitor(Config& config, const std::string& tag);

}  // namespace starling::job
