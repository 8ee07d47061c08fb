#pragma once
// Communication graphs over p peers (ranks 0..p-1) and their Metropolis–Hastings mixing
// matrices. Pure functions, no sockets: a Topology is an undirected simple graph (sorted
// neighbour lists, no self loops), and the spectral quantities describe how fast gossip
// averaging over it reaches consensus (error shrinks by about λ₂ per round).
#include <cstdint>
#include <string>
#include <vector>

namespace starling::gossip {

class Topology {
 public:
  /// Builds from neighbour lists; symmetrises them, drops self loops, duplicates and
  /// out-of-range ranks, so any input yields a valid undirected graph.
  Topology(std::string name, std::vector<std::vector<int>> neighbors);

  const std::string& name() const { return name_; }
  int size() const { return static_cast<int>(neighbors_.size()); }
  /// Sorted neighbours of rank; empty for a rank outside [0, size()).
  const std::vector<int>& neighbors(int rank) const;
  int degree(int rank) const { return static_cast<int>(neighbors(rank).size()); }
  bool connected(int a, int b) const;
  /// Whether every rank reaches every other one.
  bool is_connected() const;

 private:
  std::string name_;
  std::vector<std::vector<int>> neighbors_;
};

/// rank ± 1 (mod p).
Topology ring(int p);
/// 2-D torus with rows × cols = p, rows the largest divisor of p not above √p; wraps both ways.
Topology torus(int p);
/// rank ± 2^k (mod p) for every 2^k < p.
Topology exponential(int p);
Topology complete(int p);
/// Two cliques, ranks [0, ⌈p/2⌉) and [⌈p/2⌉, p), joined by one edge between each clique's
/// first rank: the bottleneck graph of ClippedGossip's experiments.
Topology dumbbell(int p);
/// Ranks [0, h) on a ring, every later rank a leaf joined to one ring rank, two leaves to each
/// in turn (leaf k to ring rank k/2 mod h); h ≤ 0 or h ≥ p: the ring. With the leaves
/// attacking, ClippedGossip's Byzantine-majority graph (5 honest on a ring, 11 attackers).
Topology ring_and_leaves(int p, int h);
/// The topologies a config can name, each built by topology_by_name.
inline constexpr const char* kTopologyNames[] = {"ring",   "torus",     "exponential", "one-peer-exponential",
                                                 "complete", "random", "d-cliques", "dumbbell",
                                                 "ring-and-leaves"};

/// How D-Cliques joins its cliques (Bellet et al. 2022, §5.3; d_cliques.h): one edge between
/// every pair of cliques, or the paper's small-world edges, O(log(cliques)) per clique.
enum class InterClique { fully_connected, small_world };
/// The config's name of each, indexed by InterClique.
inline constexpr const char* kInterCliqueNames[] = {"fully-connected", "small-world"};
/// Parses a name of kInterCliqueNames; false on anything else.
bool parse_inter_clique(const std::string& text, InterClique& out);

/// What some topologies are built from beyond the peer count.
struct TopologyOptions {
  int random_degree = 3;   // "random": every peer's degree
  std::uint64_t seed = 1;  // "random", "d-cliques": the draw
  int clique_size = 0;     // "d-cliques": peers per clique (≤ 0: one clique)
  /// "d-cliques": each rank's training samples per class (d_cliques.h); missing rows are uniform.
  std::vector<std::vector<double>> label_counts;
  int ring_peers = 0;  // "ring-and-leaves": the ranks on the ring
  InterClique inter_clique = InterClique::fully_connected;  // "d-cliques": how the cliques are joined
};

/// The topology a config names (kTopologyNames) over p peers; the one-peer exponential graph
/// is the exponential graph, rotated by its schedule. An unknown name gives the ring.
Topology topology_by_name(const std::string& name, int p, const TopologyOptions& options);

/// Random k-regular graph from seed (double-edge swaps on a circulant graph, kept connected).
/// Falls back to k-1 when p·k is odd and to complete(p) when k ≥ p-1.
Topology random_regular(int p, int k, std::uint64_t seed);

/// One-peer exponential graph of SGP (Assran et al. 2019): in round t, rank sends to
/// rank + 2^(t mod ⌈log2 p⌉) and receives from rank - 2^(t mod ⌈log2 p⌉); -1 when p == 1.
int one_peer_exponential_out(int p, int rank, std::uint64_t round);
int one_peer_exponential_in(int p, int rank, std::uint64_t round);

/// Dense row-major p×p matrix.
struct DenseMatrix {
  int n = 0;
  std::vector<double> values;
  double operator()(int i, int j) const { return values[static_cast<std::size_t>(i) * n + j]; }
};

/// W_ij = 1/(1+max(d_i,d_j)) for neighbours, W_ii = 1 - Σ_j W_ij, 0 elsewhere. Symmetric and
/// doubly stochastic.
DenseMatrix metropolis_weights(const Topology& topology);

struct SpectralInfo {
  double lambda2 = 0.0;  // second-largest eigenvalue modulus of W
  double gap = 1.0;      // 1 - lambda2
};

/// Spectral quantities of a symmetric mixing matrix (dense eigen solve; p up to a few hundred).
SpectralInfo spectral_info(const DenseMatrix& w);
SpectralInfo spectral_info(const Topology& topology);

}  // namespace starling::gossip
