#pragma once
// `starling invite`: the job owner's side of an open swarm (docs/swarm.md). With
// --new-owner-key it writes an Ed25519 key pair (the file holds the secret: mode 0600) and
// prints the swarm.owner_key line for the job's config; with --key and --job it writes an
// invitation to that job, signed with the owner's secret key, for one newcomer to hold.
#include <string>
#include <vector>

namespace starling::cli {

struct InviteOptions {
  bool new_owner_key = false;
  std::string key;      // the owner's key file
  std::string job;      // the job's config
  std::vector<std::string> overrides;
  double expires_hours = 0.0;  // 0: never
  std::string out;
  bool force = false;   // replace an existing file
};

/// 0 written, 1 the file could not be written, 2 bad arguments, key or config.
int run_invite(const InviteOptions& options);

}  // namespace starling::cli
