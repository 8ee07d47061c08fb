#pragma once
// CURVE key pairs for a job's peers, written where [security] keys_dir finds them: peer<ID>.key
// and peer<ID>.pub for every [[peer]] (gossip/transport/zmq/curve_pairs.h).
#include "job/config.h"

#include <string>
#include <vector>

namespace starling::job {

/// The names of the key pairs of the config's peers, one per [[peer]], as the peers look them up.
std::vector<std::string> peer_key_names(const Config& config);

/// Writes a fresh pair for each name to `dir` (created when missing; secret keys mode 0600),
/// refusing to replace an existing file unless `overwrite`. Throws (std::exception) when a
/// pair cannot be written.
void write_key_pairs(const std::string& dir, const std::vector<std::string>& names, bool overwrite);

}  // namespace starling::job
