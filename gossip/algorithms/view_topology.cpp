// Topology options over a view's members (gossip/algorithms/view_topology.h).
#include "gossip/algorithms/view_topology.h"

namespace starling::gossip {

TopologyOptions view_topology_options(const ExchangeSpec& spec, const std::vector<PeerId>& members) {
  TopologyOptions o;
  o.random_degree = spec.random_degree;
  o.seed = spec.seed;
  o.clique_size = spec.clique_size;
  o.ring_peers = spec.ring_peers;
  o.inter_clique = spec.inter_clique;
  if (spec.label_counts.empty()) return o;
  for (PeerId id : members) {
    o.label_counts.emplace_back();
    for (std::size_t i = 0; i < spec.peers.size() && i < spec.label_counts.size(); ++i)
      if (spec.peers[i].id == id) o.label_counts.back() = spec.label_counts[i];
  }
  return o;
}

}  // namespace starling::gossip
