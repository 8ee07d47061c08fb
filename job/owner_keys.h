#pragma once
// What cli/ needs of a swarm's invitations (gossip/control/invitation.h), through job/:
// the owner's key pair, a job's id, issuing an invitation, and checking a public key.
#include <cstdint>
#include <string>

namespace starling::job {

struct OwnerKeyPair {
  std::string public_key;  // hex, 64 digits
  std::string secret_key;  // hex, 128 digits
};

/// A fresh Ed25519 key pair.
OwnerKeyPair new_owner_key_pair();
/// Whether `text` is an owner's public key (64 hex digits): swarm.owner_key's check.
bool is_owner_key(const std::string& text);
/// The id of a job with this description: SHA-256, hex.
std::string job_id(const std::string& description);
/// An invitation to job `id`, expiring at Unix time `expires` (0: never); std::invalid_argument
/// for a malformed key.
std::string invitation(const std::string& secret_key, const std::string& id, std::int64_t expires);
/// The Unix time now.
std::int64_t now_unix();

}  // namespace starling::job
