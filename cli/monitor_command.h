#pragma once
// `starling monitor`: the live page served apart from the peers, starting from one of them
// (a peer's own monitor, [monitor] in the config, is job/peer_monitor.h's).
#include <string>

namespace starling::cli {

struct MonitorOptions {
  std::string peer;  // HOST:PORT of any peer's monitor
  int port = 8080;   // where this page is served
  std::string bind = "127.0.0.1";
  double seconds = 0;  // stop after this long; 0: at SIGINT or SIGTERM
};

/// `starling monitor`: serves the live page, which starts from `peer`. Returns the exit code.
int run_monitor(const MonitorOptions& options);

}  // namespace starling::cli
