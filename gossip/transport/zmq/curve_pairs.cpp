// CURVE key pairs through ZeroMQ's Curve25519 (gossip/transport/zmq/curve_pairs.h).
#include "gossip/transport/zmq/curve_pairs.h"

#include <zmq.h>

namespace starling::gossip {

CurveKeyPair generate_keypair() {
  char pub[kZ85KeyLength + 1];
  char sec[kZ85KeyLength + 1];
  if (zmq_curve_keypair(pub, sec) != 0)
    STARLING_GOSSIP_THROW(IoError, std::string("cannot generate a CURVE key pair: ") + zmq_strerror(zmq_errno()));
  return {pub, sec};
}

CurveKeyPair write_keypair(const std::string& dir, const std::string& name, bool overwrite) {
  CurveKeyPair keys = generate_keypair();
  write_keypair(dir, name, keys, overwrite);
  return keys;
}

CurveKeyPair read_keypair(const std::string& dir, const std::string& name) {
  const std::string public_path = key_file_path(dir, name, ".pub");
  CurveKeyPair keys;
  keys.secret_key = read_secret_key(key_file_path(dir, name, ".key"));
  keys.public_key = read_public_key(public_path);
  char derived[kZ85KeyLength + 1];
  if (zmq_curve_public(derived, keys.secret_key.c_str()) != 0 || keys.public_key != derived)
    throw KeyFileError(__FILE__, __LINE__, public_path, "public key does not belong to " + name + ".key");
  return keys;
}

}  // namespace starling::gossip
