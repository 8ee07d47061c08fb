#include "job/peer_graph.h"

#include "gossip/topology/topology.h"

#include <iterator>

namespace starling::job {

std::vector<std::string> topology_names() {
  return {std::begin(gossip::kTopologyNames), std::end(gossip::kTopologyNames)};
}

std::vector<std::string> inter_clique_names() {
  return {std::begin(gossip::kInterCliqueNames), std::end(gossip::kInterCliqueNames)};
}

bool parse_inter_clique(const std::string& text, gossip::InterClique& out) { return gossip::parse_inter_clique(text, out); }

std::vector<std::vector<int>> peer_neighbours(const Config& c) {
  const gossip::ExchangeSpec& x = c.node.exchange;
  gossip::TopologyOptions options;
  options.random_degree = x.random_degree, options.seed = x.seed, options.clique_size = x.clique_size;
  options.ring_peers = x.ring_peers, options.inter_clique = x.inter_clique;
  const gossip::Topology graph = gossip::topology_by_name(x.topology, static_cast<int>(c.peers.size()), options);
  std::vector<std::vector<int>> neighbours;
  for (int r = 0; r < graph.size(); ++r) neighbours.push_back(graph.neighbors(r));
  return neighbours;
}

}  // namespace starling::job
