#pragma once
// What cli/ needs of a swarm's invitations, through job/: the owner's key pair, a job's id,
// issuing an invitation and checking a public key (gossip/control/invitation.h).
#include "gossip/control/invitation.h"

namespace starling::job {

using gossip::is_owner_public_key;
using gossip::issue_invitation;
using gossip::job_id_of;
using gossip::new_owner_keys;
using gossip::OwnerKeys;
using gossip::unix_now;

}  // namespace starling::job
