#pragma once
// Closed forms for the time and traffic of one exchange, exact under the α–β model: every
// message of m bytes costs α + m·g on the sender's link (g seconds per byte), a peer sends
// one message at a time, and all peers start together. Messages travel in 1 MiB segments
// with a 48-byte frame header each (gossip's wire format), counted in the bytes; a
// pipelined transfer pays α once per step, not per segment.
//   ring all-reduce   2(p−1) steps of one chunk (bytes/p) to the right neighbour:
//                     T = 2(p−1)(α + bytes/p · g) + (p−1)/p · elements · add
//   ring all-gather   p−1 steps, each forwarding one peer's payload of w bytes:
//                     T = (p−1)(α + w·g)
//   neighbour push    one vector to each of d neighbours, one after another: T = α + d·bytes·g
//   pairwise          a request and its reply (asynchronous gossip): T = 2(α + bytes·g)
#include <cstddef>

namespace starling::simulator {

/// One peer's link as the closed forms see it: latency per message and time per byte.
struct Wire {
  double alpha = 0.0;
  double seconds_per_byte = 0.0;
  double cpu_seconds_per_byte = 0.0;  // the CPU's cost per byte, which no faster link removes
};

struct Cost {
  double seconds = 0.0;
  double bytes_sent = 0.0;  // by one peer
};

inline constexpr double kSegmentBytes = 1 << 20;
inline constexpr double kFrameHeaderBytes = 48;

/// Bytes on the wire for a message of `payload` bytes: its segments' headers added.
double framed_bytes(double payload);

Cost ring_allreduce(int peers, double bytes, double elements, const Wire& wire, double add_seconds_per_element);
Cost ring_allgather(int peers, double payload_bytes, const Wire& wire);
Cost neighbour_push(int degree, double bytes, const Wire& wire);
Cost pairwise_exchange(double bytes, const Wire& wire);

}  // namespace starling::simulator
