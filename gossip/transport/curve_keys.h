#pragma once
// CURVE key pairs and their files. A key pair is two Z85 strings of 40 characters (the
// 32-byte Curve25519 keys as ZeroMQ writes them). On disk a pair named `name` is two text
// files in one folder: `name.key` holds the secret key (mode 0600, refused when group or
// others may read it, as ssh does) and `name.pub` the public key, each one line.
// This file does not decide who is trusted: that is the transport's allow-list. Making a
// pair, or checking that two keys belong together, takes Curve25519, which ZeroMQ brings
// (gossip/transport/zmq/curve_pairs.h).
#include <cstddef>
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

/// dir/name plus extension (".key", ".pub"); KeyFileError unless name is one plain file
/// name component.
std::string key_file_path(const std::string& dir, const std::string& name, const char* extension);

/// Writes keys to dir/name.key (0600) and dir/name.pub (0644). Refuses to replace an
/// existing file unless overwrite is set, so a secret key is never lost by accident.
/// KeyFileError on an invalid key, a bad name, or any file system failure.
void write_keypair(const std::string& dir, const std::string& name, const CurveKeyPair& keys,
                   bool overwrite = false);

/// The Z85 public key in a .pub file; KeyFileError when missing, unreadable or not a key.
std::string read_public_key(const std::string& path);
/// The Z85 secret key in a .key file; also KeyFileError when group or others can read it.
std::string read_secret_key(const std::string& path);

}  // namespace starling::gossip
