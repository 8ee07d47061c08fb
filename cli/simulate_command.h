#pragma once
// `starling simulate`: predicts, before anyone rents a cluster, how a config's exchange mode
// scales to N peers: samples/s, time per epoch, speedup and efficiency over one peer, bytes
// per peer per round. Measures this machine briefly (a learner's step at the run's batch,
// the codec, the loopback link), then runs the model of simulator/scaling_model.h.
#include <string>
#include <vector>

namespace starling::cli {

struct SimulateOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string peers = "";           // "4", or a sweep "1,2,4,...,1024"; empty: the config's [[peer]] count
  std::string network = "loopback";  // RATE[:LATENCY[:BURST]] or loopback (simulator/network.h)
  std::string straggler = "none";    // simulator/stragglers.h
  int hosts = 0;                     // 0: one per peer, or one for loopback
  int cores_per_host = 0;            // 0: this machine's for loopback, else learners · kernel threads + 2
  std::string json;                  // also write the predictions here
};

/// Returns 0, or 2 for a bad config, SPEC, distribution or peer count (nothing measured).
int run_simulate(const SimulateOptions& options);

/// "4" → {4}; "1,2,4" → {1,2,4}; "1-16" → powers of two from 1 to 16. Throws
/// simulator::SpecError for anything outside 1..1024 or not a number.
std::vector<int> parse_peer_counts(const std::string& text);

}  // namespace starling::cli
