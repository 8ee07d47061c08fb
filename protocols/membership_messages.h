#pragma once
// Payloads of the membership family: hello (join, with the model's shape signature),
// heartbeat and leave. These messages carry no tensor: header codec, tensor offset and
// tensor length are zero, and no flags are defined.
//
//  hello payload (little-endian):
//  +--------+--------+--------------------------------------------------+
//  |      0 |      8 | parameter count (elements of the flat arena)     |
//  |      8 |      4 | tensor count T (1..kMaxTensors)                  |
//  |     12 |      2 | endpoint length E (0..kMaxEndpoint)              |
//  |     14 |      2 | reserved, zero                                   |
//  |     16 |    8·T | element count of each tensor, arena order        |
//  | 16+8·T |      E | endpoint the sender accepts connections on       |
//  +--------+--------+--------------------------------------------------+
//  heartbeat payload: +0 u64 sender clock (ns) | +8 u64 last round applied, then, only
//    when the sender passes on deaths it learned (gossip/control/membership.h): +16 u32 count N
//    (1..kMaxNotices) and N notices of 21 bytes each:
//    +0 u32 peer | +4 u8 NoticeKind (0..4) | +5 u64 round | +13 u64 iteration (finished:
//    where the peer stopped; 0 otherwise)
//  leave payload:     +0 u32 reason (LeaveReason)
#include <cstdint>
#include <string>
#include <vector>

#include "protocols/error.h"
#include "protocols/span.h"

namespace starling::protocols {

inline constexpr std::uint32_t kMaxTensors = 65536;
inline constexpr std::uint16_t kMaxEndpoint = 255;

/// A join request: the sender's model shape signature and where to reach it.
struct Hello {
  std::uint64_t parameter_count = 0;
  std::vector<std::uint64_t> tensor_sizes;  // must sum to parameter_count
  std::string endpoint;                      // printable ASCII, e.g. "tcp://10.0.0.2:5555"
};

inline constexpr std::uint32_t kMaxNotices = 4096;

/// How a peer left the membership: it stopped answering, said leave, or finished training;
/// or, between a watcher and the peer's other watchers (not passed on): `suspect`, have you
/// heard from it lately?, and `vouch`, yes, within my failure timeout (SWIM's indirect probe).
enum class NoticeKind : std::uint8_t { timed_out = 0, left = 1, finished = 2, suspect = 3, vouch = 4 };

/// A peer that another learned is gone, passed on from peer to peer (membership.h).
struct DeathNotice {
  std::uint32_t peer = 0;
  NoticeKind kind = NoticeKind::timed_out;
  std::uint64_t round = 0;      // finished: the round it reached
  std::uint64_t iteration = 0;  // finished: its model's iteration
};

struct Heartbeat {
  std::uint64_t clock_ns = 0;
  std::uint64_t last_round = 0;
  std::vector<DeathNotice> notices;  // empty in the I/O thread's periodic heartbeats
};

enum class LeaveReason : std::uint32_t { shutdown = 0, failure = 1, evicted = 2 };

/// invalid_option if the hello breaks the limits above or its sizes do not sum up.
Error encode_hello(const Hello& hello, std::vector<std::uint8_t>& payload);
Result<Hello> decode_hello(ByteSpan payload);
/// shape_mismatch unless the peer's signature equals ours.
Error check_shape(const Hello& peer, const Hello& ours);

/// At most kMaxNotices notices are encoded; the rest are left out.
void encode_heartbeat(const Heartbeat& heartbeat, std::vector<std::uint8_t>& payload);
/// bad_parameter for a notice count of 0 or above kMaxNotices, or an unknown kind.
Result<Heartbeat> decode_heartbeat(ByteSpan payload);

void encode_leave(LeaveReason reason, std::vector<std::uint8_t>& payload);
Result<LeaveReason> decode_leave(ByteSpan payload);

}  // namespace starling::protocols
