#pragma once
// Invitations to an open swarm (docs/swarm.md): the job's owner signs, with an Ed25519 key
// (libsodium's crypto_sign), that the holder may join the job whose description hashes to
// `job`, until `expires`. Every member holds the owner's public key (the config's
// swarm.owner_key), so each can check an invitation, and none can issue one.
//
// An invitation is text, one field a line; the signature covers every line before it:
//   starling-invitation 1
//   job <64 hex digits: SHA-256 of the job description>
//   expires <Unix seconds; 0: never>
//   nonce <32 hex digits, random: two invitations never read the same>
//   signature <128 hex digits>
// Keys are hex: a public key 64 digits, a secret key 128.
#include <cstdint>
#include <string>

namespace starling::gossip {

struct OwnerKeys {
  std::string public_key;  // hex, 64 digits
  std::string secret_key;  // hex, 128 digits
};

/// A fresh Ed25519 key pair.
OwnerKeys new_owner_keys();

/// The job id of a job description (its canonical text): SHA-256, hex.
std::string job_id_of(const std::string& description);

/// Whether `text` is a well-formed public key (64 hex digits).
bool is_owner_public_key(const std::string& text);

/// An invitation to job `job_id` expiring at `expires` (Unix seconds, 0: never), signed with
/// `secret_key`. std::invalid_argument for a malformed key or job id.
std::string issue_invitation(const std::string& secret_key, const std::string& job_id, std::int64_t expires);

/// Why `invitation` does not admit its holder to job `job_id` at `now` (Unix seconds) under
/// the owner key `public_key`: empty when it does, else a sentence naming the cause (missing,
/// malformed, forged or for another owner, for another job, expired).
std::string check_invitation(const std::string& invitation, const std::string& public_key, const std::string& job_id,
                             std::int64_t now);

/// The Unix time now, for check_invitation.
std::int64_t unix_now();

}  // namespace starling::gossip
