#pragma once
// The hello join handshake. A joining peer connects to a seed and sends hello (its model
// shape signature and endpoint, protocols/membership_messages.h). The seed checks the
// shape, connects back, tracks the joiner and answers with a join reply: accepted or
// shape_mismatch, plus its view (itself and its live peers with endpoint and public key),
// so the joiner can connect to the rest.
//
// protocols/ has no message type for a view, so the reply travels as a hello-type frame
// marked by the header's round field (kJoinReplyRound; a request has round 0) with this
// payload (little-endian):
//  +--------+------+------------------------------------------------+
//  |      0 |    1 | status (JoinStatus)                            |
//  |      1 |    3 | reserved, zero                                 |
//  |      4 |    4 | entry count N (0..kMaxViewEntries)             |
//  |      8 |  ... | N entries:                                     |
//  |        |    4 |   peer id                                      |
//  |        |    2 |   endpoint length E (0..kMaxEndpoint)          |
//  |        |    2 |   public key length K (0 or 40)                |
//  |        |    E |   endpoint, printable ASCII                    |
//  |        |    K |   public key, Z85                              |
//  +--------+------+------------------------------------------------+
#include <cstdint>
#include <string>
#include <vector>

#include "gossip/control/membership.h"
#include "gossip/transport/transport.h"
#include "protocols/error.h"
#include "protocols/membership_messages.h"
#include "protocols/span.h"

namespace starling::gossip {

inline constexpr std::uint64_t kJoinReplyRound = 1;
inline constexpr std::uint32_t kMaxViewEntries = 4096;

enum class JoinStatus : std::uint8_t { accepted = 0, shape_mismatch = 1 };

struct ViewEntry {
  PeerId peer = 0;
  std::string endpoint;
  std::string public_key;  // empty without CURVE
};

struct JoinReply {
  JoinStatus status = JoinStatus::accepted;
  std::vector<ViewEntry> view;
};

/// invalid_option when the reply breaks the limits above.
protocols::Error encode_join_reply(const JoinReply& reply, std::vector<std::uint8_t>& payload);
protocols::Result<JoinReply> decode_join_reply(protocols::ByteSpan payload);
bool is_join_reply(const protocols::FrameHeader& header);
bool is_join_request(const protocols::FrameHeader& header);

/// Joiner: sends `ours` to a seed already connected. InvalidArgument for a bad hello.
void request_join(Transport& transport, PeerId seed, const protocols::Hello& ours);

/// Seed: answers a join request. Connects back to the joiner (with CURVE under the key its
/// hello arrived with), tracks it as alive when the shapes agree (forgets it otherwise),
/// and replies. Returns the
/// status sent. InvalidArgument when the message is not a decodable join request.
JoinStatus answer_join(Transport& transport, Membership& membership, const Message& request,
                       const protocols::Hello& ours);

/// Joiner: waits for the seed's reply, serving membership meanwhile; other messages that
/// arrive before it are discarded (a joiner has no state to apply them to). The seed is
/// tracked as alive on return. TimeoutError at the deadline.
JoinReply await_join_reply(Transport& transport, Membership& membership, PeerId seed,
                           Membership::Clock::time_point deadline);

}  // namespace starling::gossip
