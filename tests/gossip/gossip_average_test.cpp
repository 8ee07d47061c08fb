// Gossip averaging over real sockets: the consensus error shrinks by about λ₂ of the
// Metropolis–Hastings matrix per round, the mean is preserved, the one-peer exponential
// graph reaches exact consensus in log2(p) rounds, and strays are dropped, not mixed in.
#define BOOST_TEST_MODULE gossip_average
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "gossip/algorithms/gossip_average.h"
#include "peer_group.h"

using namespace starling::gossip;
using starling::gossip::testing::PeerGroup;

namespace {

constexpr std::size_t kLength = 1000;

std::vector<float> input_of(int rank) {
  std::mt19937 rng(77 + rank);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(kLength);
  for (float& x : v) x = dist(rng);
  return v;
}

// history[t][r]: peer r's vector after t rounds.
using History = std::vector<std::vector<std::vector<float>>>;

History run_rounds(PeerGroup& group, const std::function<MixingSchedule(int)>& schedule_of, int rounds,
                   std::size_t segment_bytes) {
  const int p = group.size();
  History history(rounds + 1, std::vector<std::vector<float>>(p));
  group.run_all([&](int r) {
    std::vector<float> x = input_of(r);
    history[0][r] = x;
    GossipOptions o;
    o.segment_bytes = segment_bytes;
    o.timeout = std::chrono::seconds(10);
    GossipAverage gossip(group.at(r), group.ids(), schedule_of(r), o);
    for (int t = 1; t <= rounds; ++t) {
      gossip.run(x);
      history[t][r] = x;
    }
  });
  return history;
}

std::vector<double> mean_of(const std::vector<std::vector<float>>& xs) {
  std::vector<double> mean(kLength, 0.0);
  for (const auto& x : xs)
    for (std::size_t i = 0; i < kLength; ++i) mean[i] += x[i] / static_cast<double>(xs.size());
  return mean;
}

double consensus_error(const std::vector<std::vector<float>>& xs) {
  const std::vector<double> mean = mean_of(xs);
  double sq = 0.0;
  for (const auto& x : xs)
    for (std::size_t i = 0; i < kLength; ++i) sq += (x[i] - mean[i]) * (x[i] - mean[i]);
  return std::sqrt(sq);
}

}  // namespace

BOOST_AUTO_TEST_CASE(ring_error_shrinks_at_the_spectral_rate) {
  const int p = 8, rounds = 25;
  const Topology t = ring(p);
  const double lambda2 = spectral_info(t).lambda2;  // (1 + √2)/3 ≈ 0.805
  PeerGroup group(p);
  group.connect_topology(t);
  // Small segments so every vector travels in several frames.
  const History h = run_rounds(group, [&](int r) { return metropolis_schedule(t, r); }, rounds, 1024);
  const double e0 = consensus_error(h[0]);
  for (int k = 1; k <= rounds; ++k) {
    // W symmetric: ‖x_k − x̄‖ ≤ λ₂^k ‖x_0 − x̄‖ exactly, up to fp32 rounding.
    BOOST_TEST(consensus_error(h[k]) <= std::pow(lambda2, k) * e0 * 1.001 + 1e-4, "round " << k);
  }
  const double rate = std::pow(consensus_error(h[rounds]) / e0, 1.0 / rounds);
  BOOST_TEST_MESSAGE("observed rate " << rate << ", lambda2 " << lambda2);
  BOOST_TEST(rate > lambda2 - 0.1);  // not faster than the slowest mode allows: it is W at work
  const std::vector<double> before = mean_of(h[0]), after = mean_of(h[rounds]);
  for (std::size_t i = 0; i < kLength; ++i) BOOST_TEST(after[i] == before[i], boost::test_tools::tolerance(1e-4));
}

BOOST_AUTO_TEST_CASE(torus_beats_ring) {
  const int p = 9, rounds = 10;
  const Topology t = torus(p);
  PeerGroup group(p);
  group.connect_topology(t);
  const History h = run_rounds(group, [&](int r) { return metropolis_schedule(t, r); }, rounds, 1 << 20);
  const double ratio = consensus_error(h[rounds]) / consensus_error(h[0]);
  BOOST_TEST(ratio <= std::pow(spectral_info(t).lambda2, rounds) * 1.001 + 1e-4);
  BOOST_TEST(ratio < std::pow(spectral_info(ring(p)).lambda2, rounds));
}

BOOST_AUTO_TEST_CASE(one_peer_exponential_is_exact_after_log2_p_rounds) {
  const int p = 8;
  PeerGroup group(p);
  group.connect_all();
  const History h = run_rounds(group, [&](int r) { return one_peer_exponential_schedule(p, r); }, 3, 1 << 20);
  BOOST_TEST(consensus_error(h[3]) < 1e-5 * consensus_error(h[0]));
}
