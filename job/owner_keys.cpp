// The owner's side of invitations, for cli/ (job/owner_keys.h).
#include "job/owner_keys.h"

#include "gossip/control/invitation.h"

namespace starling::job {

OwnerKeyPair new_owner_key_pair() {
  const gossip::OwnerKeys keys = gossip::new_owner_keys();
  return {keys.public_key, keys.secret_key};
}

bool is_owner_key(const std::string& text) { return gossip::is_owner_public_key(text); }

std::string job_id(const std::string& description) { return gossip::job_id_of(description); }

std::string invitation(const std::string& secret_key, const std::string& id, std::int64_t expires) {
  return gossip::issue_invitation(secret_key, id, expires);
}

std::int64_t now_unix() { return gossip::unix_now(); }

}  // namespace starling::job
