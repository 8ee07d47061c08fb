#pragma once
// A peer's monitor: its Prometheus metrics at /metrics, the live page at / and its state at
// /state.json, served while the peer trains. Fed from the metrics actor (snapshots,
// evaluations) and the exchange's event log.
#include "monitor/http_server.h"
#include "monitor/live_state.h"
#include "monitor/swarm_metrics.h"

#include <string>

namespace starling::monitor {

struct MonitorAddress {
  std::string bind = "127.0.0.1";
  int port = 0;
};

class PeerMonitor {
 public:
  /// Starts serving at once; throws PortUnavailable.
  PeerMonitor(const MonitorAddress& at, const MetricsIdentity& metrics, LiveIdentity live);

  void on_snapshot(const actors::NodeSnapshot& snapshot);
  void on_eval(const EvalPoint& point);
  void on_event(const std::string& line);

 private:
  bool bits_per_byte_;
  SwarmMetrics metrics_;
  LiveState live_;
  HttpServer server_;  // last: it reads the others until it stops
};

/// "http://HOST:PORT" for a peer whose gossip endpoint is tcp://HOST:..., or "" when the
/// endpoint names no host.
std::string monitor_url(const std::string& endpoint, int port);

}  // namespace starling::monitor
