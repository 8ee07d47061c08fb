#pragma once
// One process per rank on this host, found without guessing ports: each rank binds a port
// the OS picks and reports its endpoint, and the parent hands every rank its right
// neighbour's. A rank that fails, or a rendezvous that stalls, ends the run with an error
// instead of a hang (a guessed port that is taken once held a benchmark for 10 minutes).
#include <chrono>
#include <functional>
#include <string>

namespace starling::bench {

/// A rank's line to the parent.
class RankLink {
 public:
  RankLink(int up_fd, int down_fd, int result_fd) : up_(up_fd), down_(down_fd), result_(result_fd) {}
  /// Reports this rank's endpoint and returns its right neighbour's (std::runtime_error when
  /// the parent gave up).
  std::string exchange(int rank, const std::string& own_endpoint);
  /// Where rank 0 writes its result lines.
  int result_fd() const { return result_; }

 private:
  int up_, down_, result_;
};

/// Forks p ranks running body (its return value is the rank's exit status), passes every
/// line written to result_fd to on_result, and returns when all have exited.
/// std::runtime_error when a rank fails or not all endpoints arrive within rendezvous.
void run_ranks(int p, const std::function<int(int rank, RankLink& link)>& body,
               const std::function<void(const std::string& line)>& on_result,
               std::chrono::seconds rendezvous = std::chrono::seconds(60));

}  // namespace starling::bench
