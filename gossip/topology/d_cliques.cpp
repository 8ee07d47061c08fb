// D-Cliques: cliques balanced by label histograms, joined pairwise (gossip/topology/d_cliques.h).
#include "gossip/topology/d_cliques.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <utility>

namespace starling::gossip {
namespace {

using Histograms = std::vector<std::vector<double>>;

std::size_t class_count(const Histograms& counts) {
  std::size_t classes = 1;
  for (const auto& row : counts) classes = std::max(classes, row.size());
  return classes;
}

// A peer's shares of `classes` classes (its counts over their sum); an empty or all-zero row
// is uniform. Shares, not counts: every peer steps on batches of one size whatever its
// part's size, so what a peer adds to its clique's mean gradient is its class shares.
std::vector<double> row_of(const Histograms& counts, int peer, std::size_t classes) {
  std::vector<double> row(classes, 0.0);
  const auto& given = counts[static_cast<std::size_t>(peer)];
  std::copy(given.begin(), given.end(), row.begin());
  const double total = std::accumulate(row.begin(), row.end(), 0.0);
  if (total <= 0.0) std::fill(row.begin(), row.end(), 1.0 / static_cast<double>(classes));
  else
    for (double& share : row) share /= total;
  return row;
}

// Whether a sum of shares holds a class: above what moving shares in and out leaves behind.
bool holds(double share_sum) { return share_sum > 1e-9; }

std::vector<double> global_shares(const Histograms& rows) {
  std::vector<double> total(rows.empty() ? 1 : rows.front().size(), 0.0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) total[c] += row[c];
  const double sum = std::accumulate(total.begin(), total.end(), 0.0);
  for (double& t : total) t = sum > 0.0 ? t / sum : 0.0;
  return total;
}

double skew_of_sums(const std::vector<double>& sums, const std::vector<double>& global) {
  const double total = std::accumulate(sums.begin(), sums.end(), 0.0);
  if (total <= 0.0) return 0.0;
  double skew = 0.0;
  for (std::size_t c = 0; c < sums.size(); ++c) skew += std::abs(sums[c] / total - global[c]);
  return skew;
}

// The cliques' class sums, kept up to date as peers move, and the swaps that lower the skew.
class GreedySwap {
 public:
  GreedySwap(Histograms rows, std::vector<std::vector<int>> cliques)
      : rows_(std::move(rows)), global_(global_shares(rows_)), cliques_(std::move(cliques)) {
    for (const auto& clique : cliques_) {
      sums_.emplace_back(global_.size(), 0.0);
      for (int peer : clique) add(sums_.back(), peer, 1.0);
      skews_.push_back(skew_of_sums(sums_.back(), global_));
    }
  }

  // Passes over every pair of peers in different cliques until none lowers the skew, then
  // until none covers more classes.
  std::vector<std::vector<int>> run(int max_passes) {
    for (int pass = 0; pass < max_passes && one_pass(); ++pass) {
    }
    for (int pass = 0; pass < max_passes && cover_pass(); ++pass) {
    }
    for (auto& clique : cliques_) std::sort(clique.begin(), clique.end());
    return cliques_;
  }

 private:
  void add(std::vector<double>& sums, int peer, double sign) const {
    const auto& row = rows_[static_cast<std::size_t>(peer)];
    for (std::size_t c = 0; c < row.size(); ++c) sums[c] += sign * row[c];
  }

  // Whether exchanging member i of clique a and member j of clique b improves the two cliques
  // by `better` (given their indices and their class sums after the swap); does it.
  template <class Better>
  bool try_swap(std::size_t a, std::size_t i, std::size_t b, std::size_t j, const Better& better) {
    const int u = cliques_[a][i], v = cliques_[b][j];
    std::vector<double> sa = sums_[a], sb = sums_[b];
    add(sa, u, -1.0), add(sa, v, 1.0), add(sb, v, -1.0), add(sb, u, 1.0);
    if (!better(a, b, sa, sb)) return false;
    std::swap(cliques_[a][i], cliques_[b][j]);
    sums_[a] = std::move(sa), sums_[b] = std::move(sb);
    skews_[a] = skew_of_sums(sums_[a], global_), skews_[b] = skew_of_sums(sums_[b], global_);
    return true;
  }

  template <class Better>
  bool pass(const Better& better) {
    bool improved = false;
    for (std::size_t a = 0; a < cliques_.size(); ++a)
      for (std::size_t b = a + 1; b < cliques_.size(); ++b)
        for (std::size_t i = 0; i < cliques_[a].size(); ++i)
          for (std::size_t j = 0; j < cliques_[b].size(); ++j) improved |= try_swap(a, i, b, j, better);
    return improved;
  }

  // Greedy Swap: a lower summed skew of the two cliques.
  bool one_pass() {
    return pass([&](std::size_t a, std::size_t b, const auto& new_a, const auto& new_b) {
      return skew_of_sums(new_a, global_) + skew_of_sums(new_b, global_) < skews_[a] + skews_[b] - 1e-12;
    });
  }

  // More classes held by the two cliques together, counted per clique; only while some clique lacks one.
  bool cover_pass() {
    if (std::all_of(sums_.begin(), sums_.end(), [&](const auto& sums) { return held(sums) == held(global_); }))
      return false;
    return pass([&](std::size_t a, std::size_t b, const auto& new_a, const auto& new_b) {
      return held(new_a) + held(new_b) > held(sums_[a]) + held(sums_[b]);
    });
  }

  static int held(const std::vector<double>& sums) {
    return static_cast<int>(std::count_if(sums.begin(), sums.end(), holds));
  }

  Histograms rows_;
  std::vector<double> global_;
  std::vector<std::vector<int>> cliques_;
  std::vector<std::vector<double>> sums_;
  std::vector<double> skews_;
};

// p ranks shuffled by seed and dealt into ⌈p / size⌉ cliques of sizes differing by at most one.
std::vector<std::vector<int>> dealt_cliques(int p, int clique_size, std::uint64_t seed) {
  std::vector<int> order(static_cast<std::size_t>(p));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  const int count = clique_size <= 0 || clique_size >= p ? 1 : (p + clique_size - 1) / clique_size;
  std::vector<std::vector<int>> cliques(static_cast<std::size_t>(count));
  for (int k = 0; k < p; ++k) cliques[static_cast<std::size_t>(k % count)].push_back(order[static_cast<std::size_t>(k)]);
  return cliques;
}

// The histograms of p ranks as a topology's options give them: a missing row is uniform.
Histograms rows_for(int p, const Histograms& given) {
  Histograms counts = given;
  counts.resize(static_cast<std::size_t>(std::max(p, 0)));
  return counts;
}

// Clique a and clique b joined by one edge between the members of each that carry the
// fewest inter-clique edges so far (the first of them in rank order).
class CliqueJoiner {
 public:
  CliqueJoiner(const std::vector<std::vector<int>>& cliques, std::size_t p) : cliques_(cliques), between_(p, 0), adj_(p) {
    for (const auto& clique : cliques)
      for (int u : clique) adj_[static_cast<std::size_t>(u)] = clique;
  }

  void join(std::size_t a, std::size_t b, int u, int v) {
    if (a == b || !joined_.insert({std::min(a, b), std::max(a, b)}).second) return;
    adj_[static_cast<std::size_t>(u)].push_back(v);
    ++between_[static_cast<std::size_t>(u)], ++between_[static_cast<std::size_t>(v)];
  }

  void join_least_joined(std::size_t a, std::size_t b) { join(a, b, least_joined(a), least_joined(b)); }

  std::vector<std::vector<int>> adjacency() && { return std::move(adj_); }

 private:
  int least_joined(std::size_t clique) const {
    return *std::min_element(cliques_[clique].begin(), cliques_[clique].end(), [&](int x, int y) {
      return between_[static_cast<std::size_t>(x)] < between_[static_cast<std::size_t>(y)];
    });
  }

  const std::vector<std::vector<int>>& cliques_;
  std::vector<int> between_;
  std::vector<std::vector<int>> adj_;
  std::set<std::pair<std::size_t, std::size_t>> joined_;
};

// Every pair of cliques: clique a meets clique b through its member b mod |a|, and b meets a
// through its member a mod |b|.
void join_every_pair(const std::vector<std::vector<int>>& cliques, CliqueJoiner& joiner) {
  for (std::size_t a = 0; a < cliques.size(); ++a)
    for (std::size_t b = a + 1; b < cliques.size(); ++b)
      joiner.join(a, b, cliques[a][b % cliques[a].size()], cliques[b][a % cliques[b].size()]);
}

// The paper's small world with ns = 2: clique a to a ± (2^k + i), i < 2, for every 2^k below the count.
void join_small_world(const std::vector<std::vector<int>>& cliques, CliqueJoiner& joiner) {
  constexpr long long kNearest = 2;  // ns
  const long long count = static_cast<long long>(cliques.size());
  for (long long a = 0; a < count; ++a)
    for (long long hop = 1; hop < count; hop *= 2)
      for (long long i = 0; i < kNearest; ++i)
        for (long long way : {1LL, -1LL}) {
          const long long b = (((a + way * (hop + i)) % count) + count) % count;
          joiner.join_least_joined(static_cast<std::size_t>(a), static_cast<std::size_t>(b));
        }
}

}  // namespace

double clique_skew(const Histograms& label_counts, const std::vector<int>& members) {
  const std::size_t classes = class_count(label_counts);
  Histograms rows;
  for (int peer = 0; peer < static_cast<int>(label_counts.size()); ++peer) rows.push_back(row_of(label_counts, peer, classes));
  std::vector<double> sums(classes, 0.0);
  for (int peer : members)
    for (std::size_t c = 0; c < classes; ++c) sums[c] += rows[static_cast<std::size_t>(peer)][c];
  return skew_of_sums(sums, global_shares(rows));
}

std::vector<int> missing_classes(const Histograms& label_counts, const std::vector<int>& members) {
  const std::size_t classes = class_count(label_counts);
  std::vector<bool> anywhere(classes, false), here(classes, false);
  for (int peer = 0; peer < static_cast<int>(label_counts.size()); ++peer) {
    const std::vector<double> row = row_of(label_counts, peer, classes);
    const bool member = std::find(members.begin(), members.end(), peer) != members.end();
    for (std::size_t c = 0; c < classes; ++c)
      if (holds(row[c])) anywhere[c] = true, here[c] = here[c] || member;
  }
  std::vector<int> missing;
  for (std::size_t c = 0; c < classes; ++c)
    if (anywhere[c] && !here[c]) missing.push_back(static_cast<int>(c));
  return missing;
}

std::vector<std::vector<int>> choose_cliques(const Histograms& label_counts, int clique_size, std::uint64_t seed) {
  const int p = static_cast<int>(label_counts.size());
  if (p == 0) return {};
  const std::size_t classes = class_count(label_counts);
  Histograms rows;
  for (int peer = 0; peer < p; ++peer) rows.push_back(row_of(label_counts, peer, classes));
  // A pass is O(p² · classes); the swaps converge in a handful of passes, the cap bounds the rest.
  return GreedySwap(std::move(rows), dealt_cliques(p, clique_size, seed)).run(64);
}

DCliques build_d_cliques(const Histograms& label_counts, int clique_size, std::uint64_t seed, InterClique inter) {
  auto cliques = choose_cliques(label_counts, clique_size, seed);
  CliqueJoiner joiner(cliques, label_counts.size());
  if (inter == InterClique::small_world) join_small_world(cliques, joiner);
  else join_every_pair(cliques, joiner);
  return {std::move(cliques), Topology("d-cliques", std::move(joiner).adjacency())};
}

DCliques build_d_cliques(int p, const TopologyOptions& options) {
  return build_d_cliques(rows_for(p, options.label_counts), options.clique_size, options.seed, options.inter_clique);
}

Topology d_cliques(const Histograms& label_counts, int clique_size, std::uint64_t seed) {
  return build_d_cliques(label_counts, clique_size, seed, InterClique::fully_connected).graph;
}

}  // namespace starling::gossip
