#pragma once
// Typed errors of the gossip layer. Algorithms and the transport throw these (Gloo style)
// for conditions the caller must react to: a deadline passed, a socket could not be set
// up, or arguments that cannot describe a valid exchange. Malformed input from the network
// is never an exception: it is dropped and counted (see TransportStats).
#include <stdexcept>
#include <string>

namespace starling::gossip {

/// Base class; what() carries "file:line: message".
class GossipError : public std::runtime_error {
 public:
  GossipError(const char* file, int line, const std::string& message);
};

/// A wait (receive, command acknowledgement, all-reduce step) passed its deadline.
class TimeoutError : public GossipError {
 public:
  using GossipError::GossipError;
};

/// ZeroMQ refused a bind, connect or socket option, or the I/O thread is gone.
class IoError : public GossipError {
 public:
  using GossipError::GossipError;
};

/// Arguments that cannot describe a valid exchange (unknown peer, bad rank, bad sizes).
class InvalidArgument : public GossipError {
 public:
  using GossipError::GossipError;
};

/// The membership view must change before an exchange can go on: a member died, a peer asks
/// to join, or another peer began a view change. The control plane (control_plane.h)
/// throws it out of an algorithm's receive; the elastic layer agrees on a new view.
class MembershipChanged : public GossipError {
 public:
  using GossipError::GossipError;
};

/// No peer handed over a state that passed its check (model_transfer.h): the taker must not
/// train on what it got.
class WrongState : public GossipError {
 public:
  using GossipError::GossipError;
};

/// Fewer live peers than [exchange] min_peers are left: this peer must stop.
class TooFewPeers : public GossipError {
 public:
  using GossipError::GossipError;
};

}  // namespace starling::gossip

/// Throws `type` with the current file and line.
#define STARLING_GOSSIP_THROW(type, message) throw type(__FILE__, __LINE__, (message))
