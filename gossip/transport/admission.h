#pragma once
// The checks every frame passes on its way to a transport's owner, whatever link carried it
// (gossip/transport/link.h), so that peers in one process drop what peers on sockets drop:
// unknown senders before parsing (but hello, when accept_unknown_hello), senders beyond
// max_messages_per_second ("rate_limited"), frames that do not parse or whose CRC is wrong
// (protocols::parse_frame's reasons), a header naming another sender ("sender_mismatch"),
// and raw fp32 frames with a NaN or infinity ("non_finite"). Periodic heartbeats (those
// without death notices) end here, recorded as liveness; the rest go to the inbox.
// Use from one thread at a time.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "gossip/transport/inbox.h"
#include "gossip/transport/message.h"
#include "gossip/transport/payload.h"
#include "gossip/transport/transport_stats.h"
#include "protocols/frame.h"
#include "protocols/span.h"

namespace starling::gossip {

class Admission {
 public:
  using Clock = std::chrono::steady_clock;

  Admission(const std::vector<PeerId>& accept, protocols::FrameLimits limits, bool accept_unknown_hello,
            std::uint32_t max_messages_per_second, StatsRecorder& stats);

  /// A frame past the first checks: its header, and whether it is a raw fp32 frame holding a
  /// NaN or infinity (found in the same pass as its CRC, dropped by pass()).
  struct Screened {
    protocols::FrameHeader header;
    bool finite = true;
  };

  /// Frames from `peer` are accepted from now on.
  void accept(PeerId peer) { known_.insert(peer); }
  bool knows(PeerId peer) const { return known_.count(peer) != 0; }
  /// The first checks, up to the header naming its sender: the screened frame, or nullopt
  /// when it was dropped (counted by reason).
  std::optional<Screened> screen(PeerId peer, protocols::ByteSpan head, protocols::ByteSpan payload,
                                               Clock::time_point now);
  /// A frame `via` asks this peer to relay counts against `via`'s message rate, as its own
  /// frames do, so a peer floods no one through a relay faster than it could flood the
  /// relay itself; false (counted as rate_limited) beyond it.
  bool relay_within_rate(PeerId via, Clock::time_point now);
  /// The last checks of a screened frame, then its heartbeat recorded or the message pushed
  /// into `inbox`; `bytes` counts header and payload.
  void pass(PeerId peer, const Screened& screened, Payload payload, std::uint64_t bytes,
            Clock::time_point now, Inbox& inbox);

 private:
  struct Bucket {  // token bucket of one sender's messages
    double tokens = 0.0;
    Clock::time_point last{};
  };
  bool within_rate(PeerId peer, bool known, Clock::time_point now);

  std::set<PeerId> known_;
  protocols::FrameLimits limits_;
  bool accept_unknown_hello_;
  std::uint32_t max_messages_per_second_;
  StatsRecorder& stats_;
  std::map<PeerId, Bucket> buckets_;  // known senders, and one shared by strangers
};

}  // namespace starling::gossip
