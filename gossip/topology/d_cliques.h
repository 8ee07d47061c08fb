#pragma once
// D-Cliques (Bellet et al. 2022): a topology chosen from the peers' label histograms so that
// each clique's label distribution is close to the global one. Inside a clique D-PSGD then
// averages models trained on nearly IID data, which is what undoes the bias of skewed
// partitions; the cliques are joined by one edge per pair of cliques, or by the paper's
// sparser small-world edges. Clique Averaging (clique_averaging_sync.h) averages gradients
// over the cliques themselves.
#include <cstdint>
#include <vector>

#include "gossip/topology/topology.h"

namespace starling::gossip {

/// A clique's skew: Σ_c |its share of class c − the global share of class c| (0: the global
/// distribution, at most 2), where a clique's (or all peers') share of a class is the mean of
/// its members' shares: every peer weighs the same, as it does in a mean of the peers'
/// gradients, whatever its part's size. `members` index `label_counts` (samples per class,
/// one row per peer); a row that is empty or all zero counts as uniform.
double clique_skew(const std::vector<std::vector<double>>& label_counts, const std::vector<int>& members);

/// The classes some peer holds samples of and no peer of `members` does, ascending
/// (`label_counts` as in clique_skew, so a uniform row holds every class).
std::vector<int> missing_classes(const std::vector<std::vector<double>>& label_counts, const std::vector<int>& members);

/// The cliques over label_counts.size() peers: ⌈p / clique_size⌉ cliques whose sizes differ
/// by at most one, dealt from a shuffle by `seed`, then improved by swapping pairs of peers
/// between cliques while a swap lowers the summed skew (Greedy Swap, run to a local optimum),
/// then by swaps that give a clique a class it lacks without taking one from the other, while
/// there are such (a low skew can still leave a class out). clique_size ≤ 0 or ≥ p gives
/// one clique. Each clique's ranks come sorted.
std::vector<std::vector<int>> choose_cliques(const std::vector<std::vector<double>>& label_counts, int clique_size,
                                             std::uint64_t seed);

/// The cliques and the graph joining them.
struct DCliques {
  std::vector<std::vector<int>> cliques;  // as choose_cliques gives them, in ring order for small-world edges
  Topology graph;
};

/// Every clique complete, and the cliques joined by `inter`:
/// - fully_connected: one edge between every pair of cliques, its ends spread over the
///   cliques' members so that no peer carries many of them;
/// - small_world (the paper's Algorithm "smallworld", ns = 2): the cliques on a ring in
///   their order, each joined to the two nearest cliques of every exponentially larger
///   stretch of the ring either way (those 2^k and 2^k + 1 places away, 2^k below the clique
///   count), once per pair; each edge's ends are the members of the two cliques with the
///   fewest inter-clique edges so far (the lowest rank among them). About 4·log2(cliques)
///   inter-clique edges per clique.
DCliques build_d_cliques(const std::vector<std::vector<double>>& label_counts, int clique_size, std::uint64_t seed,
                         InterClique inter);
/// The same over p ranks from the options' histograms (a missing row is uniform), clique
/// size, seed and inter-clique edges: what topology_by_name("d-cliques") builds.
DCliques build_d_cliques(int p, const TopologyOptions& options);

/// build_d_cliques(...).graph with fully connected cliques.
Topology d_cliques(const std::vector<std::vector<double>>& label_counts, int clique_size, std::uint64_t seed);

}  // namespace starling::gossip
