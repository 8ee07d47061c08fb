// Topologies and Metropolis–Hastings mixing matrices: structure, stochasticity, spectra.
#define BOOST_TEST_MODULE gossip_topology
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "gossip/algorithms/view_topology.h"
#include "gossip/control/watch_overlay.h"
#include "gossip/topology/d_cliques.h"
#include "gossip/topology/mixing_schedule.h"
#include "gossip/topology/topology.h"

using namespace starling::gossip;

namespace {

void check_symmetric_simple(const Topology& t) {
  for (int i = 0; i < t.size(); ++i)
    for (int j : t.neighbors(i)) {
      BOOST_TEST(j != i);
      BOOST_TEST(t.connected(j, i));
    }
}

void check_doubly_stochastic(const Topology& t) {
  const DenseMatrix w = metropolis_weights(t);
  for (int i = 0; i < t.size(); ++i) {
    double row = 0, col = 0;
    for (int j = 0; j < t.size(); ++j) {
      row += w(i, j);
      col += w(j, i);
      BOOST_TEST(w(i, j) >= 0.0);
      BOOST_TEST(w(i, j) == w(j, i), boost::test_tools::tolerance(1e-15));
    }
    BOOST_TEST(row == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(col == 1.0, boost::test_tools::tolerance(1e-12));
  }
}

// p peers, peer i holding 100 samples of class i mod classes only.
std::vector<std::vector<double>> one_class_each(int p, int classes) {
  std::vector<std::vector<double>> counts(static_cast<std::size_t>(p), std::vector<double>(classes, 0.0));
  for (int i = 0; i < p; ++i) counts[i][i % classes] = 100.0;
  return counts;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_topology_is_symmetric_connected_and_doubly_stochastic) {
  const std::vector<std::function<Topology(int)>> makers = {
      ring, torus, exponential, complete, [](int p) { return random_regular(p, 3, 42); },
      [](int p) { return d_cliques(one_class_each(p, 3), 4, 7); }};
  for (const auto& make : makers)
    for (int p = 1; p <= 17; ++p) {
      const Topology t = make(p);
      BOOST_TEST_CONTEXT(t.name() << " p=" << p) {
        BOOST_TEST(t.size() == p);
        BOOST_TEST(t.is_connected());
        check_symmetric_simple(t);
        check_doubly_stochastic(t);
        const SpectralInfo s = spectral_info(t);
        BOOST_TEST(s.lambda2 >= 0.0);
        BOOST_TEST(s.lambda2 < 1.0 - 1e-9);  // connected: consensus is reached
      }
    }
}

BOOST_AUTO_TEST_CASE(degrees_of_known_graphs) {
  for (int r = 0; r < 8; ++r) BOOST_TEST(ring(8).degree(r) == 2);
  BOOST_TEST(ring(2).degree(0) == 1);
  BOOST_TEST(ring(1).degree(0) == 0);
  for (int r = 0; r < 16; ++r) BOOST_TEST(torus(16).degree(r) == 4);  // 4 × 4
  for (int r = 0; r < 12; ++r) BOOST_TEST(torus(12).degree(r) == 4);  // 3 × 4
  BOOST_TEST(torus(7).degree(0) == 2);  // prime: 1 × 7, a ring
  for (int r = 0; r < 8; ++r) BOOST_TEST(exponential(8).degree(r) == 5);  // ±1, ±2, 4
  for (int r = 0; r < 16; ++r) BOOST_TEST(exponential(16).degree(r) == 7);  // ±1, ±2, ±4, 8
  for (int r = 0; r < 6; ++r) BOOST_TEST(complete(6).degree(r) == 5);
}

BOOST_AUTO_TEST_CASE(random_regular_is_seeded_and_falls_back) {
  const Topology a = random_regular(12, 3, 7), b = random_regular(12, 3, 7);
  for (int r = 0; r < 12; ++r) {
    BOOST_TEST(a.degree(r) == 3);
    BOOST_TEST(a.neighbors(r) == b.neighbors(r));
  }
  const Topology odd = random_regular(5, 3, 1);  // 5·3 odd: no 3-regular graph, use 2
  for (int r = 0; r < 5; ++r) BOOST_TEST(odd.degree(r) == 2);
  const Topology dense = random_regular(4, 9, 1);  // k ≥ p: complete
  for (int r = 0; r < 4; ++r) BOOST_TEST(dense.degree(r) == 3);
}

BOOST_AUTO_TEST_CASE(spectral_gap_of_known_cases) {
  // Ring with MH weights 1/3: eigenvalues (1 + 2 cos(2πk/p)) / 3.
  BOOST_TEST(spectral_info(ring(4)).lambda2 == 1.0 / 3.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(spectral_info(ring(8)).lambda2 == (1.0 + std::sqrt(2.0)) / 3.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(spectral_info(ring(8)).gap == 1.0 - (1.0 + std::sqrt(2.0)) / 3.0, boost::test_tools::tolerance(1e-12));
  // Complete graph: W = J/p, every other eigenvalue is 0.
  BOOST_TEST(spectral_info(complete(5)).lambda2 == 0.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(spectral_info(complete(5)).gap == 1.0, boost::test_tools::tolerance(1e-12));
  // Denser graphs mix faster.
  BOOST_TEST(spectral_info(exponential(16)).lambda2 < spectral_info(torus(16)).lambda2);
  BOOST_TEST(spectral_info(torus(16)).lambda2 < spectral_info(ring(16)).lambda2);
}

BOOST_AUTO_TEST_CASE(one_peer_exponential_rotates_and_pairs_up) {
  const int p = 8;
  for (std::uint64_t round = 0; round < 6; ++round)
    for (int r = 0; r < p; ++r) {
      const int out = one_peer_exponential_out(p, r, round);
      BOOST_TEST(out == (r + (1 << (round % 3))) % p);
      BOOST_TEST(one_peer_exponential_in(p, out, round) == r);
    }
  BOOST_TEST(one_peer_exponential_out(1, 0, 0) == -1);
  const MixingPlan plan = one_peer_exponential_schedule(p, 3)(1);
  BOOST_TEST(plan.self_weight == 0.5);
  BOOST_TEST(plan.send_to == std::vector<int>{5});
  BOOST_TEST(plan.receive_from.at(0).first == 1);
}

BOOST_AUTO_TEST_CASE(metropolis_schedule_is_the_row_of_w) {
  const Topology t = torus(9);
  const DenseMatrix w = metropolis_weights(t);
  const MixingPlan plan = metropolis_schedule(t, 4)(0);
  BOOST_TEST(plan.self_weight == w(4, 4));
  BOOST_TEST(plan.send_to == t.neighbors(4));
  for (const auto& [j, wij] : plan.receive_from) BOOST_TEST(wij == w(4, j));
}

BOOST_AUTO_TEST_CASE(d_cliques_balance_single_class_peers_exactly) {
  // 20 peers, one class each out of 10: two cliques of ten can each hold every class once,
  // and a swap out of any clique holding a class twice always lowers the skew.
  const auto counts = one_class_each(20, 10);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto cliques = choose_cliques(counts, 10, seed);
    BOOST_TEST_REQUIRE(cliques.size() == 2u);
    for (const auto& clique : cliques) {
      BOOST_TEST(clique.size() == 10u);
      BOOST_TEST(clique_skew(counts, clique) < 1e-12);
      std::vector<int> classes;
      for (int peer : clique) classes.push_back(peer % 10);
      std::sort(classes.begin(), classes.end());
      BOOST_TEST((std::unique(classes.begin(), classes.end()) == classes.end()));
    }
  }
  BOOST_TEST(clique_skew(counts, {0, 10}) == 1.8, boost::test_tools::tolerance(1e-12));  // one class of ten
}

BOOST_AUTO_TEST_CASE(d_cliques_are_complete_and_joined_once_per_pair) {
  const auto counts = one_class_each(17, 5);
  const auto cliques = choose_cliques(counts, 5, 11);
  BOOST_TEST_REQUIRE(cliques.size() == 4u);  // ⌈17 / 5⌉, sizes 5, 4, 4, 4
  const Topology t = d_cliques(counts, 5, 11);
  std::vector<int> clique_of(17, -1);
  for (std::size_t c = 0; c < cliques.size(); ++c) {
    BOOST_TEST((cliques[c].size() == 4u || cliques[c].size() == 5u));
    for (int u : cliques[c]) {
      clique_of[u] = static_cast<int>(c);
      for (int v : cliques[c]) BOOST_TEST((u == v || t.connected(u, v)));
    }
  }
  int between = 0, most = 0;
  for (int u = 0; u < 17; ++u) {
    int own = 0;
    for (int v : t.neighbors(u)) own += clique_of[v] != clique_of[u];
    between += own, most = std::max(most, own);
  }
  BOOST_TEST(between == 2 * 6);  // one edge per pair of the 4 cliques, counted from both ends
  BOOST_TEST(most <= 1);        // spread: no member carries two
  BOOST_TEST(topology_by_name("d-cliques", 17, TopologyOptions{3, 11, 5, counts}).degree(0) == t.degree(0));
}

BOOST_AUTO_TEST_CASE(d_cliques_without_histograms_fall_back_to_drawn_cliques) {
  const Topology t = topology_by_name("d-cliques", 12, TopologyOptions{3, 5, 4, {}});
  BOOST_TEST(t.size() == 12);
  BOOST_TEST(t.is_connected());
  for (int r = 0; r < 12; ++r) BOOST_TEST(t.degree(r) >= 3);
}

BOOST_AUTO_TEST_CASE(a_view_takes_its_members_histograms_in_ring_order) {
  ExchangeSpec spec;
  spec.random_degree = 5, spec.seed = 9, spec.clique_size = 3;
  for (PeerId id : {10u, 11u, 12u, 13u}) {
    spec.peers.push_back({id, "tcp://127.0.0.1:1"});
    spec.label_counts.push_back({static_cast<double>(id), 1.0});
  }
  // Peer 11 left; 99 joined without being in the spec.
  const TopologyOptions o = view_topology_options(spec, {10, 12, 13, 99});
  BOOST_TEST(o.random_degree == 5);
  BOOST_TEST(o.seed == 9u);
  BOOST_TEST(o.clique_size == 3);
  BOOST_TEST_REQUIRE(o.label_counts.size() == 4u);
  BOOST_TEST(o.label_counts[0][0] == 10.0);
  BOOST_TEST(o.label_counts[1][0] == 12.0);
  BOOST_TEST(o.label_counts[2][0] == 13.0);
  BOOST_TEST(o.label_counts[3].empty());  // uniform in choose_cliques
}

// The control plane's monitoring overlay (watch_overlay.h): symmetric (heartbeats go both
// ways), at most 2·⌈log2 n⌉ peers each, everyone up to 5, and a death reaches every peer in
// at most ⌈log2 n⌉ hops, whatever the ids' order.
BOOST_AUTO_TEST_CASE(watch_overlay_is_symmetric_logarithmic_and_of_small_diameter) {
  using starling::gossip::PeerId;
  for (std::size_t n : {1u, 2u, 3u, 5u, 8u, 9u, 31u, 128u, 256u, 300u}) {
    std::vector<PeerId> ring;
    for (std::size_t i = 0; i < n; ++i) ring.push_back(static_cast<PeerId>((i * 37 + 11) % 1000));  // ids out of order
    const std::size_t log2n = n > 1 ? static_cast<std::size_t>(std::ceil(std::log2(static_cast<double>(n)))) : 0;
    std::map<PeerId, std::vector<PeerId>> watch;
    for (PeerId p : ring) watch[p] = starling::gossip::watch_overlay(ring, p);
    for (PeerId p : ring) {
      const auto& w = watch[p];
      BOOST_TEST(w.size() <= 2 * log2n, "n " << n);
      if (n <= 5) BOOST_TEST(w.size() == n - 1, "n " << n);
      BOOST_TEST(std::count(w.begin(), w.end(), p) == 0);
      for (PeerId q : w) BOOST_TEST(std::count(watch[q].begin(), watch[q].end(), p) == 1, "n " << n << ": " << q << " does not watch " << p);
    }
    // Breadth-first from the first peer: every peer within ⌈log2 n⌉ hops.
    std::map<PeerId, std::size_t> hops{{ring[0], 0}};
    std::vector<PeerId> frontier{ring[0]};
    while (!frontier.empty()) {
      std::vector<PeerId> next;
      for (PeerId p : frontier)
        for (PeerId q : watch[p])
          if (hops.emplace(q, hops[p] + 1).second) next.push_back(q);
      frontier = std::move(next);
    }
    BOOST_TEST(hops.size() == n);
    for (const auto& [p, h] : hops) BOOST_TEST(h <= log2n, "n " << n << ": peer " << p << " is " << h << " hops away");
  }
  BOOST_TEST(starling::gossip::watch_overlay({1, 2, 3}, 9).size() == 3u);  // not a member: watches everyone
}

// ClippedGossip's graphs: the dumbbell (two cliques joined by one edge) and the ring with
// leaves (5 on a ring, 11 leaves, two on each ring peer and one more on the first).
BOOST_AUTO_TEST_CASE(dumbbell_and_ring_and_leaves) {
  const Topology d = topology_by_name("dumbbell", 16, {});
  BOOST_TEST(d.is_connected());
  BOOST_TEST(d.degree(0) == 8);  // its clique and the bridge
  BOOST_TEST(d.degree(8) == 8);
  for (int r : {1, 7, 9, 15}) BOOST_TEST(d.degree(r) == 7);
  BOOST_TEST(d.connected(0, 8));
  BOOST_TEST(!d.connected(1, 9));
  TopologyOptions o;
  o.ring_peers = 5;
  const Topology t = topology_by_name("ring-and-leaves", 16, o);
  BOOST_TEST(t.is_connected());
  BOOST_TEST(t.degree(0) == 2 + 3);  // leaves 5, 6 and 15
  for (int r = 1; r < 5; ++r) BOOST_TEST(t.degree(r) == 2 + 2);
  for (int r = 5; r < 16; ++r) BOOST_TEST(t.degree(r) == 1);
  BOOST_TEST(t.connected(7, 1));
  BOOST_TEST(t.connected(1, 2));
  o.ring_peers = 0;
  BOOST_TEST(topology_by_name("ring-and-leaves", 6, o).degree(3) == 2);
}
