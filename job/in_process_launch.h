#pragma once
// `starling launch --in-process` (or launch.in_process = true): every peer of a topology
// config as a thread of this process, for experiments with hundreds of peers on one host.
// Each peer is what `starling peer` runs — its own actor system, learners, endpoint on its
// configured address and the same exchange and control-plane code — but the data set is
// loaded once and shared, the peers reach each other through one in-memory network
// (gossip/transport/memory/memory_network.h: no sockets, one heartbeat thread for all; with CURVE,
// which needs a wire, each keeps a ZeroMQ endpoint), and one progress line covers the job.
// Peers write the same per-peer metrics and summaries as processes do, so a job's results
// do not depend on how it was launched.
#include "job/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace starling::job {

/// How one peer ended: its id, exit code (train_on's) and summary file.
struct PeerRun {
  uint32_t id = 0;
  std::string summary;
  int status = -1;
};

/// Runs every peer of `peers` (each with its summary path set) on a thread of its own and
/// fills in each one's status. False when the host cannot hold them (descriptors), logged.
bool run_peers_in_process(const Config& config, std::vector<PeerRun>& peers);

}  // namespace starling::job
