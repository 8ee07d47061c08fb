#pragma once
// The network of a simulated cluster: one α–β link model per peer-to-peer link, from a SPEC
// string. A message of m bytes takes α + m/β on a link.
//   "10gbit", "1gbit:50us", "100mbit:1ms", "2.5gbit:0.2ms"   rate[:one-way latency]
//     rate units (tc's): bit, kbit, mbit, gbit, tbit (powers of 1000, bits per second);
//     latency units: ns, us, ms, s; without one, kDefaultLatency (a TCP message through
//     ZeroMQ between two hosts: ≈48 µs measured on loopback here, and a switch hop).
//   "loopback"   every peer on this machine; α and β are measured on the spot through
//     gossip's transport (simulator/probes.h), so the spec carries no numbers.
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
  /// Seconds for one message of `bytes` on this link.
  double message_seconds(double bytes) const { return alpha_seconds + bytes / beta_bytes_per_second; }
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
