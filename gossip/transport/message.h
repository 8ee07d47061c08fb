#pragma once
// A received, validated Starling message as the transport hands it to its owner: who sent
// it, its decoded header, and the payload (the frame the transport received, so large
// payloads are never copied between the socket and the algorithm that consumes them).
#include <cstdint>

#include "gossip/transport/payload.h"
#include "protocols/frame.h"
#include "protocols/span.h"

namespace starling::gossip {

/// A peer's identity on the wire: the header's sender field and the DEALER routing id.
using PeerId = std::uint32_t;

struct Message {
  PeerId from = 0;
  protocols::FrameHeader header;
  Payload payload;

  protocols::ByteSpan bytes() const { return payload.bytes(); }
};

}  // namespace starling::gossip
