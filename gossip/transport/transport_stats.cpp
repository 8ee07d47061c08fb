// Transport traffic and drop counters (gossip/transport/transport_stats.h).
#include "gossip/transport/transport_stats.h"

#include <utility>
#include <vector>

namespace starling::gossip {

std::uint64_t TransportStats::dropped() const {
  std::uint64_t total = 0;
  for (const auto& [reason, count] : drops) total += count;
  return total;
}

std::uint64_t TransportStats::bytes_sent() const {
  std::uint64_t total = 0;
  for (const auto& [peer, t] : peers) total += t.bytes_sent;
  return total;
}

std::uint64_t TransportStats::bytes_received() const {
  std::uint64_t total = 0;
  for (const auto& [peer, t] : peers) total += t.bytes_received;
  return total;
}

void StatsRecorder::sent(PeerId peer, std::uint64_t bytes, bool control) {
  std::lock_guard<std::mutex> lock(mutex_);
  PeerTraffic& t = stats_.peers[peer];
  t.bytes_sent += bytes;
  ++t.messages_sent;
  stats_.control_sent += control;
}

void StatsRecorder::received(PeerId peer, std::uint64_t bytes, std::chrono::steady_clock::time_point when,
                             bool control) {
  std::lock_guard<std::mutex> lock(mutex_);
  PeerTraffic& t = stats_.peers[peer];
  t.bytes_received += bytes;
  ++t.messages_received;
  stats_.control_received += control;
  liveness_[peer].last_heard = when;
  heard_peers_.store(liveness_.size(), std::memory_order_relaxed);
}

void StatsRecorder::heartbeat(PeerId peer, std::uint64_t bytes, std::chrono::steady_clock::time_point when,
                              std::uint64_t view, std::uint64_t round) {
  std::lock_guard<std::mutex> lock(mutex_);
  PeerTraffic& t = stats_.peers[peer];
  t.bytes_received += bytes;
  ++t.messages_received;
  ++stats_.control_received;
  PeerLiveness& l = liveness_[peer];
  heard_peers_.store(liveness_.size(), std::memory_order_relaxed);
  l.last_heard = when;
  l.heartbeat = true;
  l.view = view;
  l.round = round;
}

void StatsRecorder::dropped(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.drops[reason];
}

void StatsRecorder::forwarded(std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.relayed_for_others += bytes;
}

void StatsRecorder::sent_through_relay(std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.sent_through_relay += bytes;
}

TransportStats StatsRecorder::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

// Copied flat under the lock into room allocated before it: a heartbeat thread recording
// into this transport must not wait while the owner, preempted among a thousand threads,
// allocates map nodes with the lock held.
std::map<PeerId, PeerLiveness> StatsRecorder::liveness() const {
  std::vector<std::pair<PeerId, PeerLiveness>> flat;
  for (;;) {
    flat.reserve(heard_peers_.load(std::memory_order_relaxed) + 4);
    std::lock_guard<std::mutex> lock(mutex_);
    if (liveness_.size() > flat.capacity()) continue;
    flat.assign(liveness_.begin(), liveness_.end());
    break;
  }
  return std::map<PeerId, PeerLiveness>(flat.begin(), flat.end());
}

}  // namespace starling::gossip
