// Topology constructors and mixing-matrix spectra (gossip/topology/topology.h).
#include "gossip/topology/topology.h"

#include "gossip/topology/d_cliques.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <set>
#include <utility>

#include <Eigen/Dense>

namespace starling::gossip {

namespace {

int wrap(long long value, int p) { return static_cast<int>(((value % p) + p) % p); }

// Neighbour lists from a function giving the offsets every rank connects to.
template <class Offsets>
std::vector<std::vector<int>> circulant(int p, const Offsets& offsets) {
  std::vector<std::vector<int>> adj(static_cast<std::size_t>(std::max(p, 0)));
  for (int r = 0; r < p; ++r)
    for (long long off : offsets) {
      adj[r].push_back(wrap(r + off, p));
      adj[r].push_back(wrap(r - off, p));
    }
  return adj;
}

// ⌈log2 p⌉ for p ≥ 2: the number of distinct hop lengths 2^k < p.
int hop_count(int p) {
  int k = 0;
  while ((1LL << k) < p) ++k;
  return k;
}

}  // namespace

Topology::Topology(std::string name, std::vector<std::vector<int>> neighbors)
    : name_(std::move(name)), neighbors_(neighbors.size()) {
  const int p = static_cast<int>(neighbors.size());
  for (int r = 0; r < p; ++r)
    for (int n : neighbors[r])
      if (n >= 0 && n < p && n != r) {
        neighbors_[r].push_back(n);
        neighbors_[n].push_back(r);
      }
  for (auto& list : neighbors_) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
}

const std::vector<int>& Topology::neighbors(int rank) const {
  static const std::vector<int> kNone;
  if (rank < 0 || rank >= size()) return kNone;
  return neighbors_[rank];
}

bool Topology::connected(int a, int b) const {
  const auto& list = neighbors(a);
  return std::binary_search(list.begin(), list.end(), b);
}

bool Topology::is_connected() const {
  if (size() == 0) return true;
  std::vector<char> seen(neighbors_.size(), 0);
  std::vector<int> stack{0};
  seen[0] = 1;
  int reached = 1;
  while (!stack.empty()) {
    int r = stack.back();
    stack.pop_back();
    for (int n : neighbors_[r])
      if (!seen[n]) {
        seen[n] = 1;
        ++reached;
        stack.push_back(n);
      }
  }
  return reached == size();
}

Topology ring(int p) { return Topology("ring", circulant(p, std::vector<long long>{1})); }

Topology torus(int p) {
  int rows = 1;
  for (int d = 1; static_cast<long long>(d) * d <= p; ++d)
    if (p % d == 0) rows = d;
  const int cols = p / std::max(rows, 1);
  std::vector<std::vector<int>> adj(static_cast<std::size_t>(std::max(p, 0)));
  for (int r = 0; r < p; ++r) {
    const int row = r / cols, col = r % cols;
    adj[r] = {row * cols + wrap(col + 1, cols), row * cols + wrap(col - 1, cols),
              wrap(row + 1, rows) * cols + col, wrap(row - 1, rows) * cols + col};
  }
  return Topology("torus", std::move(adj));
}

Topology exponential(int p) {
  std::vector<long long> hops;
  for (long long h = 1; h < p; h *= 2) hops.push_back(h);
  return Topology("exponential", circulant(p, hops));
}

namespace {

std::vector<std::vector<int>> all_pairs(int p) {
  std::vector<std::vector<int>> adj(static_cast<std::size_t>(std::max(p, 0)));
  for (int r = 0; r < p; ++r)
    for (int n = 0; n < p; ++n) adj[r].push_back(n);
  return adj;
}

}  // namespace

Topology complete(int p) { return Topology("complete", all_pairs(p)); }

namespace {

using Edge = std::pair<int, int>;

Edge ordered(int a, int b) { return a < b ? Edge{a, b} : Edge{b, a}; }

// A connected k-regular circulant graph (k < p, p·k even): ±1..±k/2, plus the antipode for odd k.
std::vector<Edge> circulant_regular(int p, int k) {
  std::set<Edge> edges;
  for (int r = 0; r < p; ++r) {
    for (int h = 1; h <= k / 2; ++h) edges.insert(ordered(r, wrap(r + h, p)));
    if (k % 2 == 1) edges.insert(ordered(r, wrap(r + p / 2, p)));
  }
  return {edges.begin(), edges.end()};
}

// Randomises a regular graph by degree-preserving double-edge swaps.
void shuffle_edges(std::vector<Edge>& edges, std::mt19937_64& rng) {
  std::set<Edge> present(edges.begin(), edges.end());
  std::uniform_int_distribution<std::size_t> pick(0, edges.size() - 1);
  const std::size_t swaps = 10 * edges.size();
  for (std::size_t s = 0; s < swaps; ++s) {
    std::size_t i = pick(rng), j = pick(rng);
    auto [a, b] = edges[i];
    auto [c, d] = edges[j];
    if (rng() & 1) std::swap(c, d);
    if (a == d || c == b || a == c || b == d) continue;
    const Edge e1 = ordered(a, d), e2 = ordered(c, b);
    if (present.count(e1) || present.count(e2)) continue;
    present.erase(edges[i]);
    present.erase(edges[j]);
    present.insert(e1);
    present.insert(e2);
    edges[i] = e1;
    edges[j] = e2;
  }
}

Topology from_edges(const char* name, int p, const std::vector<Edge>& edges) {
  std::vector<std::vector<int>> adj(static_cast<std::size_t>(p));
  for (auto [a, b] : edges) adj[a].push_back(b);
  return Topology(name, std::move(adj));
}

}  // namespace

Topology random_regular(int p, int k, std::uint64_t seed) {
  if (k >= p - 1) return Topology("random", all_pairs(p));
  if (k <= 0) return Topology("random", std::vector<std::vector<int>>(static_cast<std::size_t>(std::max(p, 0))));
  if ((static_cast<long long>(p) * k) % 2 == 1) --k;  // no k-regular graph exists: use k-1
  const std::vector<Edge> base = circulant_regular(p, k);
  std::mt19937_64 rng(seed);
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::vector<Edge> edges = base;
    shuffle_edges(edges, rng);
    Topology t = from_edges("random", p, edges);
    if (t.is_connected()) return t;
  }
  return from_edges("random", p, base);
}

int one_peer_exponential_out(int p, int rank, std::uint64_t round) {
  if (p <= 1) return -1;
  return wrap(rank + (1LL << (round % hop_count(p))), p);
}

int one_peer_exponential_in(int p, int rank, std::uint64_t round) {
  if (p <= 1) return -1;
  return wrap(rank - (1LL << (round % hop_count(p))), p);
}

DenseMatrix metropolis_weights(const Topology& t) {
  const int p = t.size();
  DenseMatrix w{p, std::vector<double>(static_cast<std::size_t>(p) * p, 0.0)};
  for (int i = 0; i < p; ++i) {
    double off_diagonal = 0.0;
    for (int j : t.neighbors(i)) {
      const double wij = 1.0 / (1.0 + std::max(t.degree(i), t.degree(j)));
      w.values[static_cast<std::size_t>(i) * p + j] = wij;
      off_diagonal += wij;
    }
    w.values[static_cast<std::size_t>(i) * p + i] = 1.0 - off_diagonal;
  }
  return w;
}

SpectralInfo spectral_info(const DenseMatrix& w) {
  if (w.n <= 1) return {};
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> m(
      w.values.data(), w.n, w.n);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(m, Eigen::EigenvaluesOnly);
  // Ascending eigenvalues; the largest is 1 for a stochastic W, so the second-largest
  // modulus is the larger of |λ_{n-1}| and |λ_1|.
  const Eigen::VectorXd& ev = solver.eigenvalues();
  const double lambda2 = std::max(std::abs(ev(w.n - 2)), std::abs(ev(0)));
  return {lambda2, 1.0 - lambda2};
}

SpectralInfo spectral_info(const Topology& topology) { return spectral_info(metropolis_weights(topology)); }

Topology dumbbell(int p) {
  const int half = (p + 1) / 2;
  std::vector<std::vector<int>> n(static_cast<std::size_t>(std::max(p, 0)));
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b && (a < half) == (b < half)) n[a].push_back(b);
  if (half < p) n[0].push_back(half);
  return Topology("dumbbell", std::move(n));
}

Topology ring_and_leaves(int p, int h) {
  if (h <= 0 || h >= p) return ring(p);
  std::vector<std::vector<int>> n(static_cast<std::size_t>(p));
  for (int k = 0; h > 1 && k < h; ++k) n[k].push_back((k + 1) % h);
  for (int k = 0; h + k < p; ++k) n[h + k].push_back((k / 2) % h);
  return Topology("ring-and-leaves", std::move(n));
}

Topology topology_by_name(const std::string& name, int p, const TopologyOptions& options) {
  if (name == "dumbbell") return dumbbell(p);
  if (name == "ring-and-leaves") return ring_and_leaves(p, options.ring_peers);
  if (name == "torus") return torus(p);
  if (name == "exponential" || name == "one-peer-exponential") return exponential(p);
  if (name == "complete") return complete(p);
  if (name == "random") return random_regular(p, options.random_degree, options.seed);
  if (name == "d-cliques") return build_d_cliques(p, options).graph;
  return ring(p);
}

bool parse_inter_clique(const std::string& text, InterClique& out) {
  for (std::size_t i = 0; i < std::size(kInterCliqueNames); ++i)
    if (text == kInterCliqueNames[i]) {
      out = static_cast<InterClique>(i);
      return true;
    }
  return false;
}

}  // namespace starling::gossip
