#pragma once
// `starling peer --listen HOST:PORT [--bootstrap HOST:PORT ...]`: a peer of an open swarm
// (docs/swarm.md). The config describes the job, not its peers (a [[peer]] list is ignored).
// The first peer starts the job alone with --listen only, as peer 0; a newcomer asks its
// bootstrap addresses in turn for an id and the live peers (gossip/control/join.h), showing
// its invitation and its job description, and then joins the running job as a peer started
// with --join does. Its data: the training set split into swarm.data_parts equal parts, the
// part of its id modulo that count, so every peer runs the same number of steps. A peer
// behind NAT advertises no address: the others reach it over the connections it dials.
#include <stdexcept>
#include <string>
#include <vector>

#include "job/config.h"

namespace starling::job {

struct SwarmPeerOptions {
  std::string listen;                  // HOST:PORT to bind
  std::string advertise;               // HOST:PORT the others dial; empty: listen
  std::vector<std::string> bootstrap;  // HOST:PORT of running peers; none: start the job
  std::string invitation;              // the invitation file; empty: none
  bool behind_nat = false;             // nobody can dial this peer (gossip/transport/link.h's kBehindNat)
};

/// A join the swarm refused, or that no bootstrap address answered: the message names the
/// cause (exit code 2).
class SwarmJoinError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Makes `config` the config of this swarm peer: its id, the peers it knows, its data part,
/// name and files. `description` is the job's (cli/config.h's job_description), `source` the
/// config file, for warnings. Throws ConfigError for a config that cannot form a swarm,
/// SwarmJoinError for a join that fails.
void join_swarm(Config& config, const std::string& description, const SwarmPeerOptions& options);

}  // namespace starling::job
