// Zero-copy sends with a completion wait (gossip/transport/send_fence.h).
#include "gossip/transport/send_fence.h"

#include "gossip/transport/error.h"
#include "gossip/transport/zmq/zmq_bridge.h"

#include <string>

namespace starling::gossip {

SendFence::SendFence() : state_(std::make_shared<State>()) {}

Payload SendFence::lend(const void* data, std::size_t size) {
  auto hint = std::make_unique<std::shared_ptr<State>>(state_);
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    ++state_->pending;  // before the message exists, so its release can never come first
  }
  try {
    // ZeroMQ wants a non-const pointer but only reads a message it sends.
    zmq::message_t message(const_cast<void*>(data), size, &SendFence::release, hint.get());
    hint.release();  // the message owns it now
    return ZmqBridge::payload(std::move(message));
  } catch (...) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    --state_->pending;
    throw;
  }
}

// Runs on ZeroMQ's I/O thread (or wherever the last reference to the message drops).
void SendFence::release(void*, void* hint) {
  auto* state = static_cast<std::shared_ptr<State>*>(hint);
  {
    std::lock_guard<std::mutex> lock((*state)->mutex);
    --(*state)->pending;
  }
  (*state)->released.notify_all();
  delete state;
}

void SendFence::wait(Clock::time_point deadline) {
  if (!wait_until(deadline))
    STARLING_GOSSIP_THROW(TimeoutError, std::to_string(pending()) + " zero-copy send(s) still held by ZeroMQ");
}

bool SendFence::wait_until(Clock::time_point until) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  return state_->released.wait_until(lock, until, [this] { return state_->pending == 0; });
}

std::size_t SendFence::pending() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->pending;
}

}  // namespace starling::gossip
