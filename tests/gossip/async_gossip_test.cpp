// Asynchronous pairwise gossip over real sockets: peers stepping at different rates never
// exchange more than max_staleness steps ahead of their slowest neighbour, the consensus
// distance shrinks, Σ x is preserved, crossing requests still average, and nothing
// deadlocks (every wait has a deadline).
#define BOOST_TEST_MODULE async_gossip
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "consensus.h"
#include "gossip/algorithms/async_gossip.h"
#include "peer_group.h"

using namespace starling::gossip;
using namespace starling::gossip::testing;

namespace {

constexpr std::size_t kLength = 500;

std::vector<float> input_of(int rank) {
  std::mt19937 rng(313 + rank);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(kLength);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<PeerId> neighbours_of(const Topology& t, int r) {
  std::vector<PeerId> n;
  for (int j : t.neighbors(r)) n.push_back(static_cast<PeerId>(j));
  return n;
}

struct Trial {
  int peers = 5;
  int steps = 40;
  std::uint64_t staleness = 2;
  bool scaling = false;
  std::chrono::microseconds slow_step{3000};  // peer 0's compute per step; the others have none
  AggregatorSpec aggregator;                  // mean, or clipped
  int liar = -1;                              // a peer that holds its model 100 away every step
};

struct Result {
  std::vector<std::vector<float>> before, after;
  std::vector<std::vector<std::uint64_t>> gaps;       // as run() reported them
  std::vector<std::vector<std::uint64_t>> true_gaps;  // against the neighbours' real steps
  std::vector<AsyncGossipStats> stats;
  std::vector<std::uint64_t> drops;
  std::vector<std::map<PeerId, NeighbourStats>> neighbours;
};

Result run_trial(const Trial& t) {
  const Topology topo = ring(t.peers);
  PeerGroup group(t.peers);
  group.connect_topology(topo);
  Result res{std::vector<std::vector<float>>(t.peers), std::vector<std::vector<float>>(t.peers),
             std::vector<std::vector<std::uint64_t>>(t.peers), std::vector<std::vector<std::uint64_t>>(t.peers),
             std::vector<AsyncGossipStats>(t.peers), std::vector<std::uint64_t>(t.peers),
             std::vector<std::map<PeerId, NeighbourStats>>(t.peers)};
  std::vector<std::atomic<std::uint64_t>> real_step(t.peers);
  for (auto& s : real_step) s = 0;
  group.run_all([&](int r) {
    AsyncGossipOptions o;
    o.max_staleness = t.staleness;
    o.staleness_scaling = t.scaling;
    o.segment_bytes = 256;  // 64 floats: every vector travels in eight frames
    o.timeout = std::chrono::seconds(5);
    o.seed = 7;
    o.aggregator = t.aggregator;
    AsyncGossip gossip(group.at(r), neighbours_of(topo, r), o);
    std::vector<float> x = input_of(r);
    res.before[r] = x;
    for (int k = 0; k < t.steps; ++k) {
      if (r == 0) std::this_thread::sleep_for(t.slow_step);
      if (r == t.liar) {
        x = input_of(r);
        for (float& v : x) v += 100.0f;
      }
      real_step[r] = static_cast<std::uint64_t>(k);
      res.gaps[r].push_back(gossip.run(x, static_cast<std::uint64_t>(k)));
      // Neighbours only ever move forward, so the real gap can only be smaller.
      std::uint64_t slowest = static_cast<std::uint64_t>(k);
      for (int j : topo.neighbors(r)) slowest = std::min<std::uint64_t>(slowest, real_step[j]);
      res.true_gaps[r].push_back(static_cast<std::uint64_t>(k) - slowest);
    }
    gossip.finish(x);
    res.after[r] = x;
    res.stats[r] = gossip.stats();
    res.neighbours[r] = gossip.neighbour_stats();
    for (const auto& [reason, count] : gossip.drops()) res.drops[r] += count;
  });
  return res;
}

void check_trial(const Trial& t, const Result& res) {
  std::uint64_t waits = 0, exchanges = 0, served = 0;
  for (int r = 0; r < t.peers; ++r) {
    for (std::uint64_t g : res.gaps[r]) BOOST_TEST(g <= t.staleness, "peer " << r);
    for (std::uint64_t g : res.true_gaps[r]) BOOST_TEST(g <= t.staleness, "peer " << r);
    BOOST_TEST(res.stats[r].max_gap <= t.staleness);
    BOOST_TEST(res.drops[r] == 0u, "peer " << r);
    waits += res.stats[r].waits;
    exchanges += res.stats[r].exchanges;
    served += res.stats[r].served;
  }
  BOOST_TEST_MESSAGE("waits " << waits << ", exchanges " << exchanges << ", served " << served);
  BOOST_TEST(waits > 0u);  // the slow peer really held the others back
  BOOST_TEST(exchanges == served);
  BOOST_TEST(max_mean_shift(res.before, res.after) < 1e-5);
}

}  // namespace

BOOST_AUTO_TEST_CASE(staleness_bound_holds_and_consensus_shrinks) {
  Trial t;
  const auto start = std::chrono::steady_clock::now();
  const Result res = run_trial(t);
  BOOST_TEST_MESSAGE("took " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                             << " s");
  check_trial(t, res);
  const double e0 = consensus_distance(res.before), e1 = consensus_distance(res.after);
  BOOST_TEST_MESSAGE("consensus distance " << e0 << " -> " << e1);
  BOOST_TEST(e1 < 0.01 * e0);
}

BOOST_AUTO_TEST_CASE(staleness_scaling_preserves_the_mean) {
  Trial t;
  t.scaling = true;
  t.staleness = 3;
  const Result res = run_trial(t);
  check_trial(t, res);
  BOOST_TEST(consensus_distance(res.after) < 0.1 * consensus_distance(res.before));
}

BOOST_AUTO_TEST_CASE(zero_staleness_is_lockstep) {
  Trial t;
  t.peers = 4;
  t.steps = 20;
  t.staleness = 0;
  t.slow_step = std::chrono::microseconds(1000);
  const Result res = run_trial(t);
  check_trial(t, res);
}

BOOST_AUTO_TEST_CASE(crossing_requests_still_average) {
  // Two peers asking each other at the same time: one declines, one exchange happens, and
  // both hold the average; with the pair alone they stay equal ever after.
  PeerGroup group(2);
  group.connect_all();
  std::vector<std::vector<float>> before(2), after(2);
  std::vector<AsyncGossipStats> stats(2);
  group.run_all([&](int r) {
    AsyncGossipOptions o;
    o.max_staleness = 100;
    o.timeout = std::chrono::seconds(5);
    AsyncGossip gossip(group.at(r), {static_cast<PeerId>(1 - r)}, o);
    std::vector<float> x = input_of(r);
    before[r] = x;
    for (std::uint64_t k = 0; k < 20; ++k) gossip.run(x, k);
    gossip.finish(x);
    after[r] = x;
    stats[r] = gossip.stats();
  });
  const std::vector<double> mean = mean_of(before);
  for (int r = 0; r < 2; ++r)
    for (std::size_t i = 0; i < kLength; ++i) BOOST_TEST(std::abs(after[r][i] - mean[i]) < 1e-5);
  BOOST_TEST_MESSAGE("declined " << stats[0].declined + stats[1].declined << ", refused "
                                 << stats[0].refused + stats[1].refused);
  BOOST_TEST(stats[0].declined + stats[1].declined == stats[0].refused + stats[1].refused);
  BOOST_TEST(stats[1].declined == 0u);  // only the lower id declines
}

BOOST_AUTO_TEST_CASE(rejects_bad_arguments) {
  PeerGroup group(3);
  group.connect(0, 1);
  BOOST_CHECK_THROW(AsyncGossip(group.at(0), {0}), InvalidArgument);
  BOOST_CHECK_THROW(AsyncGossip(group.at(0), {1, 1}), InvalidArgument);
  BOOST_CHECK_THROW(AsyncGossip(group.at(0), {2}), InvalidArgument);  // not connected
  AsyncGossipOptions o;
  o.timeout = std::chrono::milliseconds(100);
  AsyncGossip lonely(group.at(2), {}, o);
  std::vector<float> x(8, 1.0f);
  BOOST_TEST(lonely.run(x, 5) == 0u);  // no neighbour: nothing to wait for, nobody to ask
  BOOST_CHECK_THROW(lonely.run(x, 4), InvalidArgument);
  std::vector<float> y(9, 1.0f);
  BOOST_CHECK_THROW(lonely.run(y, 6), InvalidArgument);
  lonely.finish(x);
  BOOST_CHECK_THROW(lonely.run(x, 7), InvalidArgument);
  // A neighbour that never answers ends in TimeoutError, not a hang.
  AsyncGossip waiting(group.at(0), {1}, o);
  BOOST_CHECK_THROW(waiting.run(x, 0), TimeoutError);
}

// Clipped pairwise gossip: a peer that holds its model 100 away in every coordinate drags its
// neighbours there under the mean, while clipping moves them by at most τ/2 per exchange with
// it; the clipping is counted against the liar.
BOOST_AUTO_TEST_CASE(clipping_bounds_a_liars_pull) {
  const auto honest_offset = [](const Result& res, int liar) {
    const std::vector<double> start = mean_of(res.before);
    double worst = 0.0;
    for (int r = 0; r < static_cast<int>(res.after.size()); ++r) {
      if (r == liar) continue;
      double d = 0.0;
      for (std::size_t i = 0; i < kLength; ++i) d += (res.after[r][i] - start[i]) * (res.after[r][i] - start[i]);
      worst = std::max(worst, std::sqrt(d));
    }
    return worst;
  };
  Trial t;
  t.liar = 2;
  const double plain = honest_offset(run_trial(t), t.liar);
  t.aggregator = {Aggregator::clipped, 0.05, 1};
  const Result clipped = run_trial(t);
  const double bounded = honest_offset(clipped, t.liar);
  BOOST_TEST_MESSAGE("honest peers' largest offset: mean " << plain << ", clipped " << bounded);
  BOOST_TEST(plain > 200.0);  // a tenth of the liar's 100·√500
  // The honest inputs' spread (≈ √(500/3)·1.2 ≈ 15) plus at most 2·40 exchanges with the liar of τ/2 each.
  BOOST_TEST(bounded < 20.0);
  for (int r : {1, 3}) {
    const auto it = clipped.neighbours[r].find(static_cast<PeerId>(t.liar));
    BOOST_REQUIRE(it != clipped.neighbours[r].end());
    BOOST_TEST(it->second.clipped > 0u);
    BOOST_TEST(it->second.distance_max > 100.0);
  }
}
