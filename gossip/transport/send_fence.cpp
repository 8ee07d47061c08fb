// Zero-copy sends with a completion wait (gossip/transport/send_fence.h).
#include "gossip/transport/send_fence.h"

#include <string>

#include "gossip/transport/error.h"

namespace starling::gossip {

SendFence::SendFence() : state_(std::make_shared<State>()) {}

Payload SendFence::lend(const void* data, std::size_t size) {
  auto hint = std::make_unique<std::shared_ptr<State>>(state_);
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    ++state_->pending;  // before the message exists, so its release can never come first
  }
  // Lent bytes are only read (the contract above), though a Payload hands out a non-const pointer.
  return Payload(const_cast<void*>(data), size, &SendFence::release, hint.release());
}

// Runs wherever the last holder of the payload lets go: a link's thread, or the receiver's.
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
    STARLING_GOSSIP_THROW(TimeoutError, std::to_string(pending()) + " zero-copy send(s) still held by the link");
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
