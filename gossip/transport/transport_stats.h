#pragma once
// Traffic, drop counters and liveness of one transport. The I/O thread records into a
// StatsRecorder; the owner reads consistent snapshots (TransportStats, liveness) at any time.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "gossip/transport/message.h"

namespace starling::gossip {

struct PeerTraffic {
  std::uint64_t bytes_sent = 0;  // header + payload frames handed to ZeroMQ
  std::uint64_t bytes_received = 0;  // header + payload frames of accepted messages
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
};

/// What the I/O thread last heard from a peer: when (any accepted message), and what its
/// latest heartbeat said (membership.h explains view and round).
struct PeerLiveness {
  std::chrono::steady_clock::time_point last_heard{};
  bool heartbeat = false;  // a heartbeat has arrived
  std::uint64_t view = 0;
  std::uint64_t round = 0;
};

struct TransportStats {
  std::map<PeerId, PeerTraffic> peers;
  /// Dropped incoming messages by reason: protocols::to_string() names for frame errors,
  /// plus frame_count, bad_identity, unknown_sender, sender_mismatch, rate_limited, for
  /// raw fp32 frames non_finite, and for relayed frames bad_envelope, relay_refused and
  /// relay_unroutable.
  std::map<std::string, std::uint64_t> drops;
  /// Control messages (protocols::is_control_message) among the messages sent and accepted:
  /// what keeping the peers together costs, apart from moving the model.
  std::uint64_t control_sent = 0, control_received = 0;
  /// Bytes this peer forwarded as a relay for two others, and bytes it sent through one.
  std::uint64_t relayed_for_others = 0, sent_through_relay = 0;

  std::uint64_t dropped() const;
  std::uint64_t bytes_sent() const;
  std::uint64_t bytes_received() const;
};

class StatsRecorder {
 public:
  void sent(PeerId peer, std::uint64_t bytes, bool control);
  /// An accepted message: counts its bytes and proves the peer alive at `when`.
  void received(PeerId peer, std::uint64_t bytes, std::chrono::steady_clock::time_point when, bool control);
  /// A heartbeat consumed by the I/O thread (also proof of life).
  void heartbeat(PeerId peer, std::uint64_t bytes, std::chrono::steady_clock::time_point when, std::uint64_t view,
                 std::uint64_t round);
  void dropped(const std::string& reason);
  void forwarded(std::uint64_t bytes);
  void sent_through_relay(std::uint64_t bytes);
  /// The peer this one's relayed frames go through from now on (kNoRelay: none).
  void relay_is(PeerId peer) { relay_.store(peer, std::memory_order_relaxed); }
  PeerId relay() const { return relay_.load(std::memory_order_relaxed); }
  static constexpr PeerId kNoRelay = 0xFFFFFFFFu;
  TransportStats snapshot() const;
  std::map<PeerId, PeerLiveness> liveness() const;

 private:
  mutable std::mutex mutex_;
  TransportStats stats_;
  std::map<PeerId, PeerLiveness> liveness_;
  std::atomic<std::size_t> heard_peers_{0};  // liveness_.size(), read without the lock
  std::atomic<PeerId> relay_{kNoRelay};
};

}  // namespace starling::gossip
