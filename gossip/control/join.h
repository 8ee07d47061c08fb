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
//
// An open swarm (docs/swarm.md) admits peers no roster lists, in two steps, each a
// hello-type frame marked by its round:
//  - bootstrap (kBootstrapRound): a newcomer without an id (a provisional one, from
//    kProvisionalIds) sends its invitation, its job description (the canonical key=value
//    lines of the job-defining config keys) and where it waits for the answer. The seed
//    compares the description (a difference is refused naming the first differing key) and
//    checks the invitation (invitation.h) before anything else is sent. The leader of the
//    seed's view (its lowest live member, which also decides the view that admits the
//    newcomer) hands out the id: one above every id it knows of, or handed out; any other
//    seed redirects to it. The answer (kBootstrapReplyRound):
//      status u8 (BootstrapStatus), reserved 3, id u32, reason length u32, reason,
//      then a join reply (above) whose view is the seed's live peers (redirect: the leader).
//  - join (kSwarmJoinRound): with its id, the newcomer asks every live peer to join, as a
//    roster peer does, with its invitation before its hello:
//      invitation length u32, invitation, hello (protocols/membership_messages.h).
//    Each member checks the invitation again before it connects back.
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

inline constexpr std::uint64_t kBootstrapRound = 2, kBootstrapReplyRound = 3, kSwarmJoinRound = 4;
/// Ids a newcomer uses before it has one; the swarm never hands these out.
inline constexpr PeerId kProvisionalIds = 0xF0000000u;
/// Bound on an invitation's and a job description's length.
inline constexpr std::uint32_t kMaxInvitation = 4096, kMaxDescription = 1u << 20;

/// What a member of an open swarm asks of a newcomer.
struct SwarmAdmission {
  std::string owner_key;    // the job owner's public key (invitation.h)
  std::string description;  // this job's canonical key=value lines
  std::string job_id;       // job_id_of(description)
};

struct BootstrapRequest {
  std::string invitation;
  std::string description;
  std::string endpoint;  // where the newcomer waits for the answer
};

enum class BootstrapStatus : std::uint8_t { accepted = 0, refused = 1, redirect = 2 };

struct BootstrapReply {
  BootstrapStatus status = BootstrapStatus::accepted;
  PeerId id = 0;           // accepted: the newcomer's
  std::string reason;      // refused: why
  std::vector<ViewEntry> view;  // accepted: the seed's live peers; redirect: the leader
};

protocols::Error encode_bootstrap_request(const BootstrapRequest& request, std::vector<std::uint8_t>& payload);
protocols::Result<BootstrapRequest> decode_bootstrap_request(protocols::ByteSpan payload);
protocols::Error encode_bootstrap_reply(const BootstrapReply& reply, std::vector<std::uint8_t>& payload);
protocols::Result<BootstrapReply> decode_bootstrap_reply(protocols::ByteSpan payload);

/// Why a newcomer's job description differs from ours: "KEY: VALUE here, VALUE there" for
/// the first key (in our order) whose value differs or that one side lacks; empty when equal.
std::string description_difference(const std::string& ours, const std::string& theirs);

/// Seed: why `request` may not join (the description, then the invitation); empty: it may.
std::string bootstrap_refusal(const BootstrapRequest& request, const SwarmAdmission& admission);

/// Itself first (at `ours.endpoint`, else where it is bound), then every live peer it has an
/// endpoint for, leaving out `joiner`.
std::vector<ViewEntry> live_view(Transport& transport, const Membership& membership, PeerId joiner,
                                 const protocols::Hello& ours);

/// Seed: connects back to the newcomer at the endpoint its request named (with CURVE, to the
/// key the request came under), and sends `reply`.
void send_bootstrap_reply(Transport& transport, PeerId newcomer, const std::string& endpoint, const std::string& key,
                          const BootstrapReply& reply);

/// Newcomer: asks the peer at `endpoint` (with CURVE, whose key is `key`) once, and waits for
/// its answer (other messages are dropped). `transport` is the newcomer's provisional one.
/// TimeoutError at the deadline.
BootstrapReply bootstrap(Transport& transport, const std::string& endpoint, const std::string& key,
                         const BootstrapRequest& request, Transport::Clock::time_point deadline);

/// Joiner of an open swarm: its join request, with its invitation.
void request_swarm_join(Transport& transport, PeerId to, const std::string& invitation, const protocols::Hello& ours);
struct SwarmJoin {
  std::string invitation;
  protocols::Hello hello;
};
protocols::Result<SwarmJoin> decode_swarm_join(protocols::ByteSpan payload);

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
