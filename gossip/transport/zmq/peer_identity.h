#pragma once
// How a peer id travels as a ZeroMQ routing id: its decimal digits ("0", "17"). A text id
// never starts with the zero byte ZeroMQ reserves, and reads well in traces. Private to the
// transport's .cpp files (gossip/transport/zmq/zmq_bridge.h).
#include <optional>
#include <string>

#include <zmq.hpp>

#include "gossip/transport/message.h"

namespace starling::gossip {

std::string routing_id_of(PeerId peer);

/// The peer id a routing-id frame names; nullopt unless it is canonical decimal in range.
std::optional<PeerId> peer_of_routing_id(const zmq::message_t& frame);

}  // namespace starling::gossip
