#pragma once
// Peers of one process reaching each other in memory: the link behind every Transport made
// with an in-memory TransportContext (gossip/transport/transport_context.h). A peer's
// endpoint is a name here (the configured tcp://HOST:PORT, nothing bound); a send hands the
// frame, encoded as on a socket, to the receiver's checks (gossip/transport/admission.h) on
// the sender's thread, so peers in one process drop, count and hear what peers on sockets
// do, for no descriptor and no thread of their own. Frames to an endpoint nobody has bound yet (a peer not started, or
// one restarting) are held for it, as ZeroMQ queues them, up to a bound.
//
// Heartbeats: a few threads of the network beat for every link with a heartbeat interval,
// to the peers each watches, or, on a network given a clock, nobody does until its owner
// calls beat(now) (a test that steps time itself, deterministically).
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gossip/transport/link.h"

namespace starling::gossip {

class MemoryNetwork final : public LinkFactory {
 public:
  using Clock = std::chrono::steady_clock;

  /// Without `clock`: real time and heartbeat threads. With it: the caller's time and beat().
  explicit MemoryNetwork(std::function<Clock::time_point()> clock = {});
  /// Every link must be gone before (TransportContext's contract).
  ~MemoryNetwork() override;
  MemoryNetwork(const MemoryNetwork&) = delete;
  MemoryNetwork& operator=(const MemoryNetwork&) = delete;

  /// A link bound to options.bind_endpoint ("...:*" gets a fresh name); IoError when
  /// another live link holds that endpoint, InvalidArgument with CURVE, which has no wire
  /// to secure here.
  std::unique_ptr<Link> open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats) override;
  /// Sends every link's heartbeats that are due at `now`.
  void beat(Clock::time_point now);
  Clock::time_point now() const { return clock_ ? clock_() : Clock::now(); }

  struct Port;    // a bound endpoint: the receiver's checks and inbox
  struct Sender;  // a link's routes and heartbeats

  /// Hands one frame to whoever holds `endpoint` now, and returns that port; or holds the
  /// frame for the next to bind it, and returns null.
  std::shared_ptr<Port> deliver(const std::string& endpoint, PeerId from, Payload head, Payload payload);
  void unbind(const std::string& endpoint, const Port* port);

 private:
  struct Held {  // a frame for an endpoint nobody holds yet
    PeerId from;
    Payload head, payload;
  };
  void beat(Clock::time_point now, std::size_t k, std::size_t of);  // every of-th sender from k
  void beat_until_stopped(std::size_t k);

  std::function<Clock::time_point()> clock_;
  std::mutex mutex_;  // ports_, held_, held_bytes_, next_name_
  std::map<std::string, std::shared_ptr<Port>> ports_;
  std::map<std::string, std::deque<Held>> held_;
  std::map<std::string, std::size_t> held_bytes_;
  std::size_t next_name_ = 0;
  std::mutex senders_mutex_;
  std::vector<std::weak_ptr<Sender>> senders_;
  std::mutex stop_mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::vector<std::thread> beaters_;
};

}  // namespace starling::gossip
