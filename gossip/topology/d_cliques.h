#pragma once
// D-Cliques (Bellet et al. 2022): a topology chosen from the peers' label histograms so that
// each clique's label distribution is close to the global one. Inside a clique D-PSGD then
// averages models trained on nearly IID data, which is what undoes the bias of skewed
// partitions; the cliques are joined by one edge per pair of cliques.
#include <cstdint>
#include <vector>

#include "gossip/topology/topology.h"

namespace starling::gossip {

/// A clique's skew: Σ_c |its share of class c − the global share of class c| (0: the global
/// distribution, at most 2). `members` index `label_counts` (samples per class, one row per
/// peer); a row that is empty or all zero counts as uniform.
double clique_skew(const std::vector<std::vector<double>>& label_counts, const std::vector<int>& members);

/// The cliques over label_counts.size() peers: ⌈p / clique_size⌉ cliques whose sizes differ
/// by at most one, dealt from a shuffle by `seed`, then improved by swapping pairs of peers
/// between cliques while a swap lowers the summed skew (Greedy Swap, run to a local optimum).
/// clique_size ≤ 0 or ≥ p gives one clique. Each clique's ranks come sorted.
std::vector<std::vector<int>> choose_cliques(const std::vector<std::vector<double>>& label_counts, int clique_size,
                                             std::uint64_t seed);

/// The graph: every clique complete, and every pair of cliques joined by one edge, its ends
/// spread over the cliques' members so that no peer carries many of them.
Topology d_cliques(const std::vector<std::vector<double>>& label_counts, int clique_size, std::uint64_t seed);

}  // namespace starling::gossip
