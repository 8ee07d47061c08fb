#pragma once
// CURVE key pairs and their files. A key pair is two Z85 strings of 40 characters (the
// 32-byte Curve25519 keys as ZeroMQ writes them). On disk a pair named `name` is two text
// files in one folder: `name.key` holds the secret key (mode 0600, refused when group or
// others may read it, as ssh does) and `name.pub` the public key, each one line.
// This file does not decide who is trusted: that is the transport's allow-list.
#include <string>

#include "gossip/transport/error.h"

namespace starling::gossip {

inline constexpr std::size_t kZ85KeyLength = 40;

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters
};

/// A key file that cannot be written or read, or does not hold a valid key.
class KeyFileError : public GossipError {
 public:
  KeyFileError(const char* file, int line, std::string path, std::string reason);
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

/// Whether `key` is 40 characters of Z85 that decode to 32 bytes.
bool is_z85_key(const std::string& key);

/// A fresh key pair (zmq_curve_keypair); IoError when libzmq was built without CURVE.
CurveKeyPair generate_keypair();

/// Writes keys to dir/name.key (0600) and dir/name.pub (0644). Refuses to replace an
/// existing file unless overwrite is set, so a secret key is never lost by accident.
/// KeyFileError on an invalid key, a bad name, or any file system failure.
void write_keypair(const std::string& dir, const std::string& name, const CurveKeyPair& keys,
                   bool overwrite = false);
/// Generates a pair, writes it as above and returns it.
CurveKeyPair write_keypair(const std::string& dir, const std::string& name, bool overwrite = false);

/// The Z85 public key in a .pub file; KeyFileError when missing, unreadable or not a key.
std::string read_public_key(const std::string& path);
/// The Z85 secret key in a .key file; also KeyFileError when group or others can read it.
std::string read_secret_key(const std::string& path);
/// dir/name.key and dir/name.pub, checked to belong together (zmq_curve_public).
CurveKeyPair read_keypair(const std::string& dir, const std::string& name);

}  // namespace starling::gossip
