#pragma once
// The queue that carries validated messages from the transport's I/O thread to its owner.
// Thread-safe for one producer and any consumers; pop() waits at most until a deadline.
// Tracks queued payload bytes so the producer can stop reading the network when the owner
// falls behind (backpressure instead of unbounded memory).
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "gossip/transport/message.h"

namespace starling::gossip {

class Inbox {
 public:
  using Clock = std::chrono::steady_clock;

  void push(Message message);
  /// Puts messages back before everything queued, keeping their order.
  void push_front(std::vector<Message> messages);
  /// The oldest message, or nullopt once the deadline passes or the inbox is closed and empty.
  std::optional<Message> pop(Clock::time_point deadline);
  /// Wakes every waiter; later pops return what is left, then nullopt at once.
  void close();
  bool closed() const;
  std::size_t queued_bytes() const;

 private:
  std::optional<Message> take_locked();

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
  std::size_t bytes_ = 0;
  bool closed_ = false;
};

}  // namespace starling::gossip
