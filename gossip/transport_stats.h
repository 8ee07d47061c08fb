#pragma once
// Traffic and drop counters of one transport. The I/O thread records into a StatsRecorder;
// the owner reads consistent snapshots (TransportStats) at any time.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "gossip/message.h"

namespace starling::gossip {

struct PeerTraffic {
  std::uint64_t bytes_sent = 0;  // header + payload frames handed to ZeroMQ
  std::uint64_t bytes_received = 0;  // header + payload frames of accepted messages
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
};

struct TransportStats {
  std::map<PeerId, PeerTraffic> peers;
  /// Dropped incoming messages by reason: protocols::to_string() names for frame errors,
  /// plus frame_count, bad_identity, unknown_sender, sender_mismatch.
  std::map<std::string, std::uint64_t> drops;

  std::uint64_t dropped() const;
  std::uint64_t bytes_sent() const;
  std::uint64_t bytes_received() const;
};

class StatsRecorder {
 public:
  void sent(PeerId peer, std::uint64_t bytes);
  void received(PeerId peer, std::uint64_t bytes);
  void dropped(const std::string& reason);
  TransportStats snapshot() const;

 private:
  mutable std::mutex mutex_;
  TransportStats stats_;
};

}  // namespace starling::gossip
