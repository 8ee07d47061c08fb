#pragma once
// The periodic heartbeat a link sends on its owner's behalf (membership.h explains it): the
// header's round carries the owner's view, the payload's last_round its round and clock_ns
// the time of sending. Receivers record such heartbeats as liveness (admission.h).
#include <chrono>
#include <cstdint>
#include <vector>

#include "gossip/transport/message.h"

namespace starling::gossip {

/// Encodes the header and payload of one periodic heartbeat from `self`.
void encode_periodic_heartbeat(PeerId self, std::uint64_t view, std::uint64_t round,
                               std::chrono::steady_clock::time_point now, std::vector<std::uint8_t>& head,
                               std::vector<std::uint8_t>& payload);

}  // namespace starling::gossip
