#pragma once
// Zero-copy sends out of a caller's buffer (Gloo's send/waitSend): lend() wraps bytes the
// caller keeps in a ZeroMQ message without copying them, and wait() returns once ZeroMQ
// has let go of every message lent so far, i.e. written it to the socket (or encrypted it),
// so the caller may change the bytes again.
//
// Contract: the lent bytes must not change before wait() returns, and must outlive the
// transport when wait() ends in TimeoutError (ZeroMQ may still hold them then). Use from
// one thread; ZeroMQ's I/O thread only releases.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

#include <zmq.hpp>

namespace starling::gossip {

class SendFence {
 public:
  using Clock = std::chrono::steady_clock;

  SendFence();

  /// A message that points at [data, data + size); counted until ZeroMQ frees it.
  zmq::message_t lend(const void* data, std::size_t size);
  /// Waits until every lent message is released; TimeoutError at the deadline.
  void wait(Clock::time_point deadline);
  /// Waits until every lent message is released or `until` passes; true when released.
  bool wait_until(Clock::time_point until);
  /// Messages ZeroMQ still holds.
  std::size_t pending() const;

 private:
  struct State {
    mutable std::mutex mutex;
    std::condition_variable released;
    std::size_t pending = 0;
  };
  static void release(void* data, void* hint);

  // Shared with every lent message, so a release after this fence is gone stays safe.
  std::shared_ptr<State> state_;
};

}  // namespace starling::gossip
