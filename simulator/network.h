#pragma once
// The network of a simulated cluster: one α–β link model per peer-to-peer link, from a SPEC
// string. A message of m bytes takes α + m/β on a link.
//   "10gbit", "1gbit:50us", "100mbit:1ms", "2.5gbit:0.2ms"   rate[:one-way latency]
//     rate units (tc's): bit, kbit, mbit, gbit, tbit (powers of 1000, bits per second);
//     latency units: ns, us, ms, s; without one, kDefaultLatency (a TCP message through
//     ZeroMQ between two hosts, and a switch hop).
//   "100mbit:50us:125kb"   a token-bucket link (tc tbf, cloud egress limits): bursts of up
//     to that many bytes (units b, kb, mb: powers of 1000; kib, mib: of 1024) leave at once
//     when the bucket is full; only the average is held to the rate. It refills at the
//     rate while the peer computes.
//   "loopback"   every peer on this machine; α and β are measured on the spot through
//     gossip's transport (simulator/probes.h), so the spec carries no numbers.
#include <algorithm>
#include <stdexcept>
#include <string>

namespace starling::simulator {

/// A bad SPEC, peer count or option; the CLI turns it into exit code 2.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Link {
  double alpha_seconds = 0.0;
  double beta_bytes_per_second = 0.0;
  double burst_bytes = 0.0;  // token bucket; 0: every byte waits its turn on the wire
  /// Bytes of a round's `bytes` that leave without waiting for the rate, the bucket having
  /// had `refill_seconds` (the round's compute) to fill since the last round emptied it.
  double bucket_bytes(double bytes, double refill_seconds) const {
    return burst_bytes > 0 ? std::min({burst_bytes, beta_bytes_per_second * refill_seconds, bytes}) : 0.0;
  }
};

inline constexpr double kDefaultLatency = 50e-6;

struct NetworkSpec {
  std::string text;
  bool loopback = false;  // link to be measured
  Link link;              // filled unless loopback
};

/// Parses a SPEC as above; SpecError naming the spec and what was expected.
NetworkSpec parse_network(const std::string& spec);

}  // namespace starling::simulator
