#pragma once
// Zero-copy sends out of a caller's buffer (Gloo's send/waitSend): lend() wraps bytes the
// caller keeps in a Payload without copying them, and wait() returns once the transport
// has let go of every payload lent so far, i.e. written it to the socket (or encrypted it),
// so the caller may change the bytes again.
//
// Contract: the lent bytes must not change before wait() returns, and must outlive the
// transport when wait() ends in TimeoutError (its sockets may still hold them then). Use
// from one thread; the transport's I/O threads only release.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

#include "gossip/transport/payload.h"

namespace starling::gossip {

class SendFence {
 public:
  using Clock = std::chrono::steady_clock;

  SendFence();

  /// A payload that points at [data, data + size); counted until the transport frees it.
  Payload lend(const void* data, std::size_t size);
  /// Waits until every lent payload is released; TimeoutError at the deadline.
  void wait(Clock::time_point deadline);
  /// Waits until every lent payload is released or `until` passes; true when released.
  bool wait_until(Clock::time_point until);
  /// Payloads the transport still holds.
  std::size_t pending() const;

 private:
  struct State {
    mutable std::mutex mutex;
    std::condition_variable released;
    std::size_t pending = 0;
  };
  static void release(void* data, void* hint);

  // Shared with every lent payload, so a release after this fence is gone stays safe.
  std::shared_ptr<State> state_;
};

}  // namespace starling::gossip
