#pragma once
// Test harness: a job of p peers on ipc:// endpoints in a fresh folder (removed with it),
// each peer a PeerExchange of its own, so that a peer can start late or die alone. Its specs
// have the short heartbeats and deadlines the elastic suites run with; set
// STARLING_TEST_LOG to see the peers' event logs.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gossip/algorithms/exchange_spec.h"

namespace starling::gossip::testing {

// A job of p peers on ipc endpoints in a fresh folder.
class Job {
 public:
  Job(int p, ExchangeMode mode) : p_(p), mode_(mode) {
    dir_ = std::filesystem::temp_directory_path() / ("starling-elastic-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
  }
  ~Job() { std::filesystem::remove_all(dir_); }

  ExchangeSpec spec(int rank) const {
    ExchangeSpec s;
    s.mode = mode_;
    s.rank = rank;
    for (int r = 0; r < p_; ++r) s.peers.push_back({static_cast<PeerId>(r), "ipc://" + (dir_ / std::to_string(r)).string()});
    s.timeout = std::chrono::seconds(20);
    s.heartbeat = std::chrono::milliseconds(100);
    s.failure_timeout = std::chrono::milliseconds(1500);  // CI runs this beside other suites on two cores
    s.start_timeout = std::chrono::milliseconds(2000);
    s.min_peers = 2;
    if (std::getenv("STARLING_TEST_LOG"))  // the peers' event log, for debugging
      s.on_event = [rank](const std::string& line) { std::fprintf(stderr, "[peer %d] %s\n", rank, line.c_str()); };
    return s;
  }

 private:
  static inline std::atomic<int> counter_{0};
  int p_;
  ExchangeMode mode_;
  std::filesystem::path dir_;
};

}  // namespace starling::gossip::testing
