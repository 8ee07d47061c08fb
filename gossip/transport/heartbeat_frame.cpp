// The periodic heartbeat's frame (gossip/transport/heartbeat_frame.h).
#include "gossip/transport/heartbeat_frame.h"

#include "protocols/frame.h"
#include "protocols/membership_messages.h"

namespace starling::gossip {

void encode_periodic_heartbeat(PeerId self, std::uint64_t view, std::uint64_t round,
                               std::chrono::steady_clock::time_point now, std::vector<std::uint8_t>& head,
                               std::vector<std::uint8_t>& payload) {
  protocols::Heartbeat beat;
  beat.clock_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  beat.last_round = round;
  payload.clear();
  head.clear();
  protocols::encode_heartbeat(beat, payload);
  protocols::FrameHeader h;
  h.type = protocols::MessageType::heartbeat;
  h.sender = self;
  h.round = view;
  protocols::encode_header_for(h, {payload.data(), payload.size()}, head);
}

}  // namespace starling::gossip
