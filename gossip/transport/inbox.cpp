// Owner-facing message queue of the transport (gossip/transport/inbox.h).
#include "gossip/transport/inbox.h"

#include <utility>

namespace starling::gossip {

void Inbox::push(Message message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    bytes_ += message.payload.size();
    queue_.push_back(std::move(message));
  }
  ready_.notify_one();
}

void Inbox::push_front(std::vector<Message> messages) {
  if (messages.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      bytes_ += it->payload.size();
      queue_.push_front(std::move(*it));
    }
  }
  ready_.notify_all();
}

std::optional<Message> Inbox::take_locked() {
  if (queue_.empty()) return std::nullopt;
  Message m = std::move(queue_.front());
  queue_.pop_front();
  bytes_ -= m.payload.size();
  return m;
}

std::optional<Message> Inbox::pop(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait_until(lock, deadline, [this] { return !queue_.empty() || closed_; });
  return take_locked();
}

void Inbox::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

bool Inbox::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::size_t Inbox::queued_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace starling::gossip
