#pragma once
// `starling launch`: every peer of a topology config on this host, as separate processes
// (`starling peer --id P`), or with launch.in_process as threads of this one
// (cli/in_process_launch.h). Their output is prefixed with the peer id; when one fails or the
// user presses Ctrl-C, the others are stopped; at the end one summary aggregates the peers'.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace starling::cli {

struct LaunchOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string summary;     // empty: <out_dir>/<name>.summary.json
  std::string executable;  // the starling binary to run peers with
  /// Peer i runs in network namespace starling-ns<i> at 10.77.0.(i+1), each endpoint keeping
  /// its port: the emulated hosts of `scripts/netns.sh up N [RATE]` (root only).
  bool netns = false;
  bool resume = false;     // every peer continues from its newest valid checkpoint
  bool in_process = false; // every peer a thread of this process (sets launch.in_process)
  std::vector<uint32_t> hold;  // peers not started (to be started by hand, to join later)
};

/// Returns 0 when every peer finished or was killed by a signal while the others went on
/// (at least one finished), 1 when one failed, 2 on a bad configuration. Peers killed by a
/// signal (kill -9, the OOM killer) do not stop the others: they carry on without them.
int run_launch(const LaunchOptions& options);

}  // namespace starling::cli
