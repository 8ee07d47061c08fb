#pragma once
// What a config reads of the graphs its peers exchange over (gossip/topology/): the names it
// chooses among, and the graph of its [[peer]] list, for the schema and checks of cli/.
#include "job/config.h"

#include <string>
#include <vector>

namespace starling::job {

/// exchange.topology's names; the first is the default.
std::vector<std::string> topology_names();
/// exchange.inter_clique's names, in gossip::InterClique's order; the first is the default.
std::vector<std::string> inter_clique_names();
/// Parses a name of inter_clique_names(); false on anything else.
bool parse_inter_clique(const std::string& text, gossip::InterClique& out);

/// Every peer's neighbours (ranks into config.peers) under the config's exchange.topology
/// and its options.
std::vector<std::vector<int>> peer_neighbours(const Config& config);

}  // namespace starling::job
