#pragma once
// What the live page shows of one peer, as the JSON of /state.json: who it is and where the
// other peers' pages are, its step and speed, its loss and validation curves (bounded),
// its links' traffic and states, and the swarm's events (joins, deaths, view changes,
// clipped neighbours). Thread-safe.
#include "actors/node.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace starling::monitor {

/// Another peer of the job and where its monitor answers (empty when it has none).
struct PeerAddress {
  uint32_t id = 0;
  std::string endpoint;
  std::string monitor_url;  // http://host:port
};

struct LiveIdentity {
  uint32_t id = 0;
  std::string run;
  std::string endpoint;
  std::string metric = "accuracy";  // or "bits_per_byte"
  std::vector<PeerAddress> peers;   // every other peer of the job
};

/// Curves keep at most this many points each: past it, every other point is dropped.
inline constexpr std::size_t kMaxCurvePoints = 512;
inline constexpr std::size_t kMaxEvents = 200;

class LiveState {
 public:
  explicit LiveState(LiveIdentity who);
  void update(const actors::NodeSnapshot& snapshot);
  /// `value` is the validation metric of `point` (accuracy, or bits per byte).
  void update(const EvalPoint& point, double value);
  void event(const std::string& text);
  std::string json() const;

 private:
  void event_locked(const std::string& text);

  mutable std::mutex mutex_;
  LiveIdentity who_;
  actors::NodeSnapshot last_;
  // When last_ arrived: the node sends none while an exchange waits, so the page ages what
  // it says (the peers' silences) by this much.
  std::chrono::steady_clock::time_point last_at_ = std::chrono::steady_clock::now();
  bool started_ = false;
  struct Point {
    double wall, step, value;
  };
  std::vector<Point> train_, validation_;
  std::deque<std::pair<double, std::string>> events_;
  std::map<uint32_t, uint64_t> clipped_;      // by neighbour, at the last snapshot
  std::map<uint32_t, std::string> states_;    // peer states at the last snapshot
  std::map<uint32_t, double> sent_per_second_;  // by peer, between the last two that read the peers
  double peers_wall_ = 0.0;                     // the run's time at the last of those
};

}  // namespace starling::monitor
