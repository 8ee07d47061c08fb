#pragma once
// The frame a relay's traffic carries before a message's header and payload (private to
// gossip/transport/zmq/). A peer behind NAT sends a message for another peer behind NAT to a
// relay — a peer both have dialed — as [to N][header][payload]; the relay passes it on as
// [from M][header][payload], and the receiver screens it as a frame of M's (admission.h),
// so M's header must name M as the sender. Without CURVE a relay sees the message as it
// is, and could alter it; with CURVE the header and payload travel in a box between the two
// ends (relay_box.h), and a newcomer's hello, which a relay passes on for a sender it does
// not know yet, is marked as one in the envelope ('H'), since the relay cannot read it.
//
// Wire format: 8 bytes, "SRL" + a direction byte ('>' to, 'H' to, a boxed hello, '<' from)
// + u32 peer id LE.
#include <optional>

#include <zmq.hpp>

#include "gossip/transport/message.h"

namespace starling::gossip {

struct RelayEnvelope {
  enum class Direction : char { to = '>', hello_to = 'H', from = '<' };
  Direction direction = Direction::to;
  PeerId peer = 0;  // the destination (to) or the origin (from)
};

zmq::message_t encode_relay_envelope(RelayEnvelope envelope);
/// The envelope a frame holds; nullopt for anything else.
std::optional<RelayEnvelope> decode_relay_envelope(const zmq::message_t& frame);

}  // namespace starling::gossip
