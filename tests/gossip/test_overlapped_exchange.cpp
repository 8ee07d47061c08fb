// The overlapped (double-buffered) exchange, every peer a thread with a PeerExchange of its
// own on loopback: a mix begun on a snapshot arrives as a correction that keeps the local
// steps taken meanwhile; the strict form leaves every peer with the identical mean; misuse
// and a missing peer end in typed errors.
#define BOOST_TEST_MODULE gossip_overlapped_exchange
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "gossip/error.h"
#include "gossip/overlapped_exchange.h"
#include "tests/free_ports.h"

using namespace starling::gossip;

namespace {

constexpr std::size_t kLength = 5000;

std::vector<float> random_vector(std::uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(kLength);
  for (float& x : v) x = dist(rng);
  return v;
}

ExchangeSpec ring_spec(const std::vector<std::string>& endpoints, int rank) {
  ExchangeSpec spec;
  spec.mode = ExchangeMode::allreduce;
  spec.rank = rank;
  spec.timeout = std::chrono::milliseconds(10000);
  for (std::size_t i = 0; i < endpoints.size(); ++i) spec.peers.push_back({static_cast<PeerId>(i), endpoints[i]});
  return spec;
}

void on_every_peer(int p, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_mix_arrives_late_and_keeps_the_steps_taken_meanwhile) {
  constexpr int p = 3;
  const auto endpoints = starling::testing::free_loopback_endpoints(p);
  std::vector<std::vector<float>> start(p), steps(p), after(p), strict(p);
  for (int r = 0; r < p; ++r) start[r] = random_vector(10 + r, 1.0f), steps[r] = random_vector(20 + r, 0.01f);
  std::vector<double> distance(p);
  on_every_peer(p, [&](int r) {
    OverlappedExchange exchange(ring_spec(endpoints, r), kLength);
    std::vector<float> z = start[r];
    exchange.begin(z.data(), 0, 0.0);
    BOOST_CHECK_THROW(exchange.begin(z.data(), 0, 0.0), InvalidArgument);  // one at a time
    for (std::size_t i = 0; i < kLength; ++i) z[i] += steps[r][i];  // the learners go on
    exchange.complete(z.data());
    distance[r] = exchange.last_distance();
    after[r] = z;
    exchange.exchange_now(z.data(), 1, 0.0);
    strict[r] = z;
  });
  double worst = 0.0, spread = 0.0;
  for (std::size_t i = 0; i < kLength; ++i) {
    double mean = 0.0, now = 0.0;
    for (int r = 0; r < p; ++r) mean += start[r][i] / p, now += after[r][i] / p;
    for (int r = 0; r < p; ++r) {
      worst = std::max(worst, std::fabs(after[r][i] - (mean + steps[r][i])));  // z ← z + (mixed − snapshot)
      spread = std::max(spread, std::fabs(strict[r][i] - now));                // z ← mixed
      BOOST_REQUIRE(strict[r][i] == strict[0][i]);  // identical bits after the strict exchange
    }
  }
  BOOST_TEST(worst < 1e-5);
  BOOST_TEST(spread < 1e-5);
  for (int r = 0; r < p; ++r) BOOST_TEST(distance[r] > 0.1);  // the snapshots started far apart
}

BOOST_AUTO_TEST_CASE(a_missing_peer_surfaces_when_the_mix_is_awaited) {
  const auto endpoints = starling::testing::free_loopback_endpoints(2);
  ExchangeSpec spec = ring_spec(endpoints, 0);
  spec.timeout = std::chrono::milliseconds(300);
  OverlappedExchange exchange(spec, kLength);  // peer 1 never comes
  std::vector<float> z = random_vector(1, 1.0f);
  const std::vector<float> before = z;
  exchange.begin(z.data(), 0, 0.0);
  BOOST_CHECK_THROW(exchange.complete(z.data()), TimeoutError);
  BOOST_TEST(z == before);  // a failed mix changes nothing
  BOOST_TEST(!exchange.pending());
}
