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
//  heartbeat payload: +0 u64 sender clock (ns) | +8 u64 last round applied
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

struct Heartbeat {
  std::uint64_t clock_ns = 0;
  std::uint64_t last_round = 0;
};

enum class LeaveReason : std::uint32_t { shutdown = 0, failure = 1, evicted = 2 };

/// invalid_option if the hello breaks the limits above or its sizes do not sum up.
Error encode_hello(const Hello& hello, std::vector<std::uint8_t>& payload);
Result<Hello> decode_hello(ByteSpan payload);
/// shape_mismatch unless the peer's signature equals ours.
Error check_shape(const Hello& peer, const Hello& ours);

void encode_heartbeat(const Heartbeat& heartbeat, std::vector<std::uint8_t>& payload);
Result<Heartbeat> decode_heartbeat(ByteSpan payload);

void encode_leave(LeaveReason reason, std::vector<std::uint8_t>& payload);
Result<LeaveReason> decode_leave(ByteSpan payload);

}  // namespace starling::protocols
