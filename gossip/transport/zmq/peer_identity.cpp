// Peer ids as ZeroMQ routing ids (gossip/transport/zmq/peer_identity.h).
#include "gossip/transport/zmq/peer_identity.h"

#include <cstdint>

namespace starling::gossip {

std::string routing_id_of(PeerId peer) { return std::to_string(peer); }

std::optional<PeerId> peer_of_routing_id(const zmq::message_t& frame) {
  const auto* p = static_cast<const unsigned char*>(frame.data());
  const std::size_t n = frame.size();
  if (n == 0 || n > 10 || (n > 1 && p[0] == '0')) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] < '0' || p[i] > '9') return std::nullopt;
    value = value * 10 + (p[i] - '0');
  }
  if (value > UINT32_MAX) return std::nullopt;
  return static_cast<PeerId>(value);
}

}  // namespace starling::gossip
