// D-Cliques' cliques and inter-clique edges (gossip/topology/d_cliques.h): the paper's
// small-world edges against their definition, the classes a clique lacks, cliques that hold
// every class whenever some dealing does, and a clique size above the peer count.
#define BOOST_TEST_MODULE gossip_d_cliques
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "gossip/topology/d_cliques.h"

using namespace starling::gossip;

namespace {

using Histograms = std::vector<std::vector<double>>;

// p peers, peer i holding 60 samples of class i mod classes only.
Histograms one_class_each(int p, int classes) {
  Histograms counts(static_cast<std::size_t>(p), std::vector<double>(classes, 0.0));
  for (int i = 0; i < p; ++i) counts[i][i % classes] = 60.0;
  return counts;
}

std::vector<int> clique_index(const DCliques& d, int p) {
  std::vector<int> of(static_cast<std::size_t>(p), -1);
  for (std::size_t k = 0; k < d.cliques.size(); ++k)
    for (int r : d.cliques[k]) of[r] = static_cast<int>(k);
  return of;
}

// The pairs of cliques the graph joins, each with the number of edges joining them.
std::map<std::pair<int, int>, int> joined_cliques(const DCliques& d) {
  const std::vector<int> of = clique_index(d, d.graph.size());
  std::map<std::pair<int, int>, int> pairs;
  for (int u = 0; u < d.graph.size(); ++u)
    for (int v : d.graph.neighbors(u))
      if (of[u] < of[v]) ++pairs[{of[u], of[v]}];
  return pairs;
}

// The paper's small world, ns = 2: clique a with a ± (2^k + i) mod L, i < 2, 2^k < L.
std::set<std::pair<int, int>> small_world_pairs(int cliques) {
  std::set<std::pair<int, int>> pairs;
  for (int a = 0; a < cliques; ++a)
    for (int hop = 1; hop < cliques; hop *= 2)
      for (int i = 0; i < 2; ++i)
        for (int way : {1, -1}) {
          const int b = ((a + way * (hop + i)) % cliques + cliques) % cliques;
          if (a != b) pairs.insert({std::min(a, b), std::max(a, b)});
        }
  return pairs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(small_world_joins_each_clique_to_the_nearest_of_every_doubling_stretch) {
  for (int p : {40, 170, 1000}) {
    BOOST_TEST_CONTEXT("p=" << p) {
      const DCliques d = build_d_cliques(one_class_each(p, 10), 10, 7, InterClique::small_world);
      const int cliques = static_cast<int>(d.cliques.size());
      const auto pairs = joined_cliques(d);
      std::set<std::pair<int, int>> got;
      for (const auto& [pair, edges] : pairs) {
        BOOST_TEST(edges == 1);  // one edge per joined pair
        got.insert(pair);
      }
      const auto want = small_world_pairs(cliques);
      BOOST_TEST((got == want));
      BOOST_TEST(d.graph.is_connected());
      // Each clique complete; its inter-clique edges spread evenly over its members.
      const std::vector<int> of = clique_index(d, p);
      for (const auto& clique : d.cliques) {
        int most = 0, least = p;
        for (int u : clique) {
          int between = 0;
          for (int v : d.graph.neighbors(u)) between += of[v] != of[u];
          for (int v : clique) BOOST_TEST((u == v || d.graph.connected(u, v)));
          most = std::max(most, between), least = std::min(least, between);
        }
        BOOST_TEST(most - least <= 1);
      }
    }
  }
  // At the paper's 1,000 peers in 100 cliques: 26 neighbour cliques each, not 99.
  const DCliques world = build_d_cliques(one_class_each(1000, 10), 10, 7, InterClique::small_world);
  const DCliques full = build_d_cliques(one_class_each(1000, 10), 10, 7, InterClique::fully_connected);
  BOOST_TEST(small_world_pairs(100).size() == 100u * 26 / 2);
  BOOST_TEST(joined_cliques(full).size() == 100u * 99 / 2);
  BOOST_TEST(world.cliques == full.cliques);  // the inter-clique edges change, not the cliques
}

BOOST_AUTO_TEST_CASE(missing_classes_are_those_held_elsewhere_and_not_here) {
  const Histograms counts{{5, 0, 0, 0}, {0, 3, 0, 0}, {1, 0, 2, 0}};
  BOOST_TEST(missing_classes(counts, {0, 1}) == (std::vector<int>{2}), boost::test_tools::per_element());
  BOOST_TEST(missing_classes(counts, {0}) == (std::vector<int>{1, 2}), boost::test_tools::per_element());
  BOOST_TEST(missing_classes(counts, {1, 2}).empty());  // class 3 is held nowhere
  // An empty row is uniform: it holds every class, class 3 included.
  const Histograms with_empty{{5, 0, 0, 0}, {0, 3, 0, 0}, {1, 0, 2, 0}, {}};
  BOOST_TEST(missing_classes(with_empty, {1, 2}) == (std::vector<int>{3}), boost::test_tools::per_element());
  BOOST_TEST(missing_classes(with_empty, {3}).empty());
}

// Random splits of 8 peers, one to three of 5 classes each, into two cliques of four: the
// cliques chosen hold every class whenever some way of dealing them does (all 35 tried).
BOOST_AUTO_TEST_CASE(cliques_hold_every_class_whenever_some_dealing_does) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> classes(1, 3), label(0, 4), size(1, 40);
  int coverable = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Histograms counts(8, std::vector<double>(5, 0.0));
    for (auto& row : counts)
      for (int k = classes(rng); k > 0; --k) row[label(rng)] += size(rng);
    bool can = false;
    for (int mask = 0; mask < 256 && !can; ++mask) {
      if (__builtin_popcount(mask) != 4 || !(mask & 1)) continue;
      std::vector<int> a, b;
      for (int r = 0; r < 8; ++r) (mask >> r & 1 ? a : b).push_back(r);
      can = missing_classes(counts, a).empty() && missing_classes(counts, b).empty();
    }
    if (!can) continue;
    ++coverable;
    const auto cliques = choose_cliques(counts, 4, static_cast<std::uint64_t>(trial));
    BOOST_TEST_REQUIRE(cliques.size() == 2u);
    for (const auto& clique : cliques) BOOST_TEST(missing_classes(counts, clique).empty(), "trial " << trial);
  }
  BOOST_TEST(coverable > 50);
}

// A clique size above the peer count: one clique of every peer, the complete graph.
BOOST_AUTO_TEST_CASE(a_clique_size_above_the_peers_builds_one_clique) {
  for (InterClique inter : {InterClique::fully_connected, InterClique::small_world}) {
    const DCliques d = build_d_cliques(one_class_each(7, 3), 50, 1, inter);
    BOOST_TEST_REQUIRE(d.cliques.size() == 1u);
    BOOST_TEST(d.cliques[0] == (std::vector<int>{0, 1, 2, 3, 4, 5, 6}), boost::test_tools::per_element());
    BOOST_TEST(missing_classes(one_class_each(7, 3), d.cliques[0]).empty());
    for (int r = 0; r < 7; ++r) BOOST_TEST(d.graph.degree(r) == 6);
  }
}

// Shares, not counts: a peer with ten times the samples weighs the same in its clique.
BOOST_AUTO_TEST_CASE(a_clique_skew_weighs_every_peer_alike) {
  const Histograms counts{{600, 0}, {0, 60}};
  BOOST_TEST(clique_skew(counts, {0, 1}) == 0.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(clique_skew(counts, {0}) == 1.0, boost::test_tools::tolerance(1e-12));
}
