// A peer's own monitor, started with its node (job/peer_monitor.h).
#include "job/peer_monitor.h"

#include "job/task_kind.h"
#include "monitor/live_page.h"

#include <spdlog/spdlog.h>

namespace starling::job {

std::unique_ptr<monitor::PeerMonitor> start_peer_monitor(Config& config, const std::string& tag) {
  const MonitorSettings& m = config.monitor;
  if (m.metrics_port == 0) return nullptr;
  const auto rank = static_cast<std::size_t>(config.node.exchange.rank);
  const int port = m.metrics_port + static_cast<int>(rank);
  if (port > 65535)
    throw ConfigError(m.port_at + ": port " + std::to_string(m.metrics_port) + " plus peer index " + std::to_string(rank) +
                      " passes 65535");
  monitor::MetricsIdentity metrics;
  metrics.run = config.run.name;
  metrics.mode = gossip::exchange_mode_name(config.node.exchange.mode);
  metrics.codec = config.node.exchange.codec;
  metrics.bits_per_byte = task_kind(config.data).metric() == Metric::bits_per_byte;
  monitor::LiveIdentity live;
  live.run = config.run.name;
  live.metric = metrics.bits_per_byte ? "bits_per_byte" : "accuracy";
  for (std::size_t i = 0; i < config.peers.size(); ++i) {
    const PeerEntry& p = config.peers[i];
    if (i == rank) {
      live.id = metrics.peer_id = p.id;
      live.endpoint = p.endpoint;
    } else {
      live.peers.push_back({p.id, p.endpoint, monitor::monitor_url(p.endpoint, m.metrics_port + static_cast<int>(i))});
    }
  }
  std::unique_ptr<monitor::PeerMonitor> watch;
  try {
    watch = std::make_unique<monitor::PeerMonitor>(monitor::MonitorAddress{m.bind, port}, metrics, std::move(live));
  } catch (const monitor::PortUnavailable& e) {
    throw ConfigError(m.port_at + ": the monitor's port " + std::to_string(port) + ": " + e.what());
  }
  monitor::PeerMonitor* to = watch.get();
  config.node.on_snapshot = [to](const actors::NodeSnapshot& s) { to->on_snapshot(s); };
  if (auto log = config.node.exchange.on_event)
    config.node.exchange.on_event = [to, log](const std::string& line) {
      log(line);
      to->on_event(line);
    };
  spdlog::info("{}monitor: http://{}:{}/ (metrics at /metrics)", tag, m.bind, port);
  return watch;
}

}  // namespace starling::job
