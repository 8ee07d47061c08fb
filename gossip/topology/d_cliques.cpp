// D-Cliques: cliques balanced by label histograms, joined pairwise (gossip/topology/d_cliques.h).
#include "gossip/topology/d_cliques.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace starling::gossip {
namespace {

using Histograms = std::vector<std::vector<double>>;

std::size_t class_count(const Histograms& counts) {
  std::size_t classes = 1;
  for (const auto& row : counts) classes = std::max(classes, row.size());
  return classes;
}

// A peer's counts over `classes` classes; an empty or all-zero row is one sample per class.
std::vector<double> row_of(const Histograms& counts, int peer, std::size_t classes) {
  std::vector<double> row(classes, 0.0);
  const auto& given = counts[static_cast<std::size_t>(peer)];
  std::copy(given.begin(), given.end(), row.begin());
  if (std::accumulate(row.begin(), row.end(), 0.0) <= 0.0) std::fill(row.begin(), row.end(), 1.0);
  return row;
}

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

  // Passes over every pair of peers in different cliques until none improves.
  std::vector<std::vector<int>> run(int max_passes) {
    for (int pass = 0; pass < max_passes && one_pass(); ++pass) {
    }
    for (auto& clique : cliques_) std::sort(clique.begin(), clique.end());
    return cliques_;
  }

 private:
  void add(std::vector<double>& sums, int peer, double sign) const {
    const auto& row = rows_[static_cast<std::size_t>(peer)];
    for (std::size_t c = 0; c < row.size(); ++c) sums[c] += sign * row[c];
  }

  // Whether exchanging member i of clique a and member j of clique b lowers the skew; does it.
  bool try_swap(std::size_t a, std::size_t i, std::size_t b, std::size_t j) {
    const int u = cliques_[a][i], v = cliques_[b][j];
    std::vector<double> sa = sums_[a], sb = sums_[b];
    add(sa, u, -1.0), add(sa, v, 1.0), add(sb, v, -1.0), add(sb, u, 1.0);
    const double ka = skew_of_sums(sa, global_), kb = skew_of_sums(sb, global_);
    if (ka + kb >= skews_[a] + skews_[b] - 1e-12) return false;
    std::swap(cliques_[a][i], cliques_[b][j]);
    sums_[a] = std::move(sa), sums_[b] = std::move(sb);
    skews_[a] = ka, skews_[b] = kb;
    return true;
  }

  bool one_pass() {
    bool improved = false;
    for (std::size_t a = 0; a < cliques_.size(); ++a)
      for (std::size_t b = a + 1; b < cliques_.size(); ++b)
        for (std::size_t i = 0; i < cliques_[a].size(); ++i)
          for (std::size_t j = 0; j < cliques_[b].size(); ++j) improved |= try_swap(a, i, b, j);
    return improved;
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

std::vector<std::vector<int>> choose_cliques(const Histograms& label_counts, int clique_size, std::uint64_t seed) {
  const int p = static_cast<int>(label_counts.size());
  if (p == 0) return {};
  const std::size_t classes = class_count(label_counts);
  Histograms rows;
  for (int peer = 0; peer < p; ++peer) rows.push_back(row_of(label_counts, peer, classes));
  // A pass is O(p² · classes); the swaps converge in a handful of passes, the cap bounds the rest.
  return GreedySwap(std::move(rows), dealt_cliques(p, clique_size, seed)).run(64);
}

Topology d_cliques(const Histograms& label_counts, int clique_size, std::uint64_t seed) {
  const auto cliques = choose_cliques(label_counts, clique_size, seed);
  std::vector<std::vector<int>> adj(label_counts.size());
  for (const auto& clique : cliques)
    for (int u : clique) adj[static_cast<std::size_t>(u)] = clique;
  // Clique a meets clique b through its member b mod |a|, and b through its member a mod |b|.
  for (std::size_t a = 0; a < cliques.size(); ++a)
    for (std::size_t b = a + 1; b < cliques.size(); ++b) {
      const int u = cliques[a][b % cliques[a].size()], v = cliques[b][a % cliques[b].size()];
      adj[static_cast<std::size_t>(u)].push_back(v);
    }
  return Topology("d-cliques", std::move(adj));
}

}  // namespace starling::gossip
