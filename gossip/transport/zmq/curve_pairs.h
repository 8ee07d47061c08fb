#pragma once
// CURVE key pairs made and checked with ZeroMQ's Curve25519 (the key files themselves:
// gossip/transport/curve_keys.h). One of zmq/'s two public headers: it includes no ZeroMQ.
#include <string>

#include "gossip/transport/curve_keys.h"

namespace starling::gossip {

/// A fresh key pair (zmq_curve_keypair); IoError when libzmq was built without CURVE.
CurveKeyPair generate_keypair();

/// Generates a pair, writes it as write_keypair(dir, name, keys, overwrite) does and returns it.
CurveKeyPair write_keypair(const std::string& dir, const std::string& name, bool overwrite = false);

/// dir/name.key and dir/name.pub, checked to belong together (zmq_curve_public);
/// KeyFileError as the readers of curve_keys.h, or naming the .pub file when they do not.
CurveKeyPair read_keypair(const std::string& dir, const std::string& name);

}  // namespace starling::gossip
