#pragma once
// The configured topology's parameters laid over a view: the spec knows every configured
// peer's label histogram (for D-Cliques), a view holds some of those peers in ring order.
#include <vector>

#include "gossip/algorithms/exchange_spec.h"
#include "gossip/topology/topology.h"

namespace starling::gossip {

/// The spec's topology options with label_counts re-indexed by the members' ranks in the
/// view (a member the spec does not list gets an empty, uniform row).
TopologyOptions view_topology_options(const ExchangeSpec& spec, const std::vector<PeerId>& members);

}  // namespace starling::gossip
