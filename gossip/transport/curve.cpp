// CURVE security settings (gossip/transport/curve.h).
#include "gossip/transport/curve.h"

#include "gossip/transport/error.h"

namespace starling::gossip {

namespace {

void require_key(const std::string& key, const std::string& what) {
  if (!is_z85_key(key)) STARLING_GOSSIP_THROW(InvalidArgument, what + " is not a 40-character Z85 CURVE key");
}

}  // namespace

void validate(const CurveSecurity& security) {
  require_key(security.keys.public_key, "own public key");
  require_key(security.keys.secret_key, "own secret key");
  for (const std::string& key : security.allowed_keys) require_key(key, "allow-listed key '" + key + "'");
  for (const auto& [peer, key] : security.peer_keys) require_key(key, "public key of peer " + std::to_string(peer));
}

std::optional<std::string> peer_public_key(const Message& message) {
  const char* key = message.payload.sender_key();
  if (!key || !is_z85_key(key)) return std::nullopt;
  return std::string(key);
}

}  // namespace starling::gossip
