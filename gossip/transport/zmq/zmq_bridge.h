#pragma once
// Private to gossip/transport/zmq/ (gossip/check_rooms.sh keeps it so): ZeroMQ messages as
// Payloads and back, their bytes not copied. Only in this folder does <zmq.hpp> appear, so
// nothing that includes the transport's interface compiles against ZeroMQ.
#include <string>

#include <zmq.hpp>

#include "gossip/transport/payload.h"

namespace starling::gossip {

/// A payload holding `message` in its place; its sender_key() is the connection's ZAP
/// user id (the client's CURVE key).
Payload payload_of(zmq::message_t&& message) noexcept;
/// A payload holding `message`, whose sender_key() is `sender_key` (Z85): a frame that came
/// through a relay in a box (relay_box.h), authenticated by the box rather than the link.
Payload payload_of(zmq::message_t&& message, const std::string& sender_key);

/// The message that sends `payload`'s bytes, leaving it empty: the message it holds, a copy
/// of a small one, or its bytes adopted (released when ZeroMQ is done with them).
zmq::message_t message_of(Payload&& payload);

}  // namespace starling::gossip
