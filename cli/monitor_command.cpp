#include "cli/monitor_command.h"

#include "cli/task_kind.h"
#include "monitor/live_page.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <ctime>

namespace starling::cli {

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

namespace {

sigset_t stop_signals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  return stop;
}

// Waits for SIGINT or SIGTERM (blocked by the caller), or `seconds` when positive.
void wait_for_stop(double seconds) {
  const sigset_t stop = stop_signals();
  if (seconds <= 0) {
    int signal = 0;
    sigwait(&stop, &signal);
    return;
  }
  timespec limit{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
  sigtimedwait(&stop, nullptr, &limit);
}

}  // namespace

int run_monitor(const MonitorOptions& options) {
  const std::string seed = options.peer.rfind("http://", 0) == 0 ? options.peer : "http://" + options.peer;
  try {
    // Block the signals before civetweb's threads exist, so only sigwait takes them.
    const sigset_t stop = stop_signals();
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    monitor::HttpServer server(options.bind, options.port,
                               {{"/", [] { return monitor::Response{"text/html; charset=utf-8", monitor::live_page_html()}; }},
                                {"/seed.json", [seed] { return monitor::Response{"application/json", monitor::seed_json(seed)}; }}});
    spdlog::info("the live page of the swarm of {}: http://{}:{}/", seed, options.bind, options.port);
    wait_for_stop(options.seconds);
  } catch (const monitor::PortUnavailable& e) {
    spdlog::error("--port {}: {}", options.port, e.what());
    return 2;
  }
  return 0;
}

}  // namespace starling::cli
