#pragma once
// CURVE security settings of a transport. With them the peer's ROUTER is a CURVE server
// whose ZAP handler admits only the allow-listed public keys, and every DEALER is a CURVE
// client that checks the neighbour's public key as the server key. One key pair serves
// both roles, so a peer's public key is at once its server key and its client identity.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gossip/transport/curve_keys.h"
#include "gossip/transport/message.h"

namespace starling::gossip {

/// Receives one line per refused connection attempt; called on the ZAP handler's thread,
/// so it must be thread-safe and must not call back into the transport.
using RefusalLog = std::function<void(const std::string& line)>;

struct CurveSecurity {
  CurveKeyPair keys;  // this peer's pair (Z85)
  /// Client public keys (Z85) the ZAP handler admits; everyone else is refused and counted.
  std::vector<std::string> allowed_keys;
  /// Known neighbours' public keys: the server key connect() uses when none is passed,
  /// and the only key a message claiming to come from that peer id may arrive under.
  std::map<PeerId, std::string> peer_keys;
  RefusalLog on_refusal;
  /// An open swarm's: every client key is admitted (its invitation is the gate, checked on
  /// the messages), and a peer id is bound to its key from the first route to it on.
  bool open = false;
};

/// InvalidArgument naming the first key that is not Z85 (own pair, allow-list, peer keys).
void validate(const CurveSecurity& security);

/// The Z85 public key a received message was authenticated with (the ZAP handler's user
/// id); nullopt for messages that did not arrive over CURVE.
std::optional<std::string> peer_public_key(const Message& message);

}  // namespace starling::gossip
