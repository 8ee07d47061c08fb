// The exchange beside the compute (NodeSpec::overlap), several peers as threads of one
// process, each a node with its own actor system and sockets on loopback: overlapped local
// SGD, DiLoCo and all-reduce still end with identical models on every peer (the last
// exchange is strict), train about as well as the strict exchange, and repeat bit for bit
// (the mixes arrive at fixed points, however long they take); overlapped gossip trains.
#define BOOST_TEST_MODULE actors_overlap
#include <boost/test/unit_test.hpp>

#include "actors/node.h"
#include "gossip/transport/endpoint.h"
#include "tests/actors/small_node.h"

#include <exception>
#include <thread>
#include <vector>

using namespace starling;
using namespace starling::actors;
using namespace starling::actors::testing;

namespace {

// One node per peer on its own thread; the results in peer order. Rethrows a peer's error.
std::vector<NodeResult> run_peers(gossip::ExchangeMode mode, int peers, int period, bool overlap, double outer_lr = 1.0,
                                  double outer_momentum = 0.0, int overlap_steps = 0) {
  const auto endpoints = starling::gossip::free_loopback_endpoints(peers);
  std::vector<NodeResult> results(peers);
  std::vector<std::exception_ptr> errors(peers);
  std::vector<std::thread> threads;
  for (int r = 0; r < peers; ++r)
    threads.emplace_back([&, r] {
      NodeSpec spec = small_spec(IntraSync::sma, 1);
      spec.threads = 1;
      spec.period = period;
      spec.overlap = overlap;
      spec.overlap_steps = overlap_steps;
      spec.exchange.mode = mode;
      spec.exchange.outer_lr = outer_lr;
      spec.exchange.outer_momentum = outer_momentum;
      spec.exchange.rank = r;
      spec.exchange.timeout = std::chrono::milliseconds(20000);
      for (int i = 0; i < peers; ++i) spec.exchange.peers.push_back({static_cast<gossip::PeerId>(i), endpoints[i]});
      try {
        results[r] = run(spec);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

double min_accuracy(const std::vector<NodeResult>& results) {
  double a = 1.0;
  for (const auto& r : results) a = std::min(a, r.train.last().test_accuracy);
  return a;
}

bool identical(const std::vector<NodeResult>& results) {
  for (const auto& r : results)
    if (r.train.model_checksum != results[0].train.model_checksum) return false;
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(overlapped_local_sgd_ends_identical_trains_and_repeats) {
  const auto strict = run_peers(gossip::ExchangeMode::local_sgd, 2, 4, false);
  const auto overlapped = run_peers(gossip::ExchangeMode::local_sgd, 2, 4, true);
  const auto again = run_peers(gossip::ExchangeMode::local_sgd, 2, 4, true);
  BOOST_TEST(identical(strict));
  BOOST_TEST(identical(overlapped));
  BOOST_TEST(overlapped[0].train.model_checksum != strict[0].train.model_checksum);  // the mix came late
  BOOST_TEST(overlapped[0].train.model_checksum == again[0].train.model_checksum);   // deterministic
  BOOST_TEST(min_accuracy(strict) > 0.9);
  BOOST_TEST(min_accuracy(overlapped) > min_accuracy(strict) - 0.05);
  for (const auto& r : overlapped) {
    BOOST_TEST(r.bytes_sent > 0u);
    BOOST_TEST(r.members == (std::vector<uint32_t>{0, 1}));
    // The exchange's wait is part of the node's time outside the learners, never more.
    BOOST_TEST(r.exchange_seconds <= r.sync_seconds + 1e-3);
  }
}

// DiLoCo's outer step (Nesterov, α = 0.7, β = 0.9) on the pseudo-gradients of snapshots,
// landing on top of the local steps taken meanwhile: a period late, or one iteration after
// its exchange point (Streaming DiLoCo's τ = 1), each its own path, the same on a rerun.
BOOST_AUTO_TEST_CASE(overlapped_diloco_ends_identical_and_trains) {
  const auto strict = run_peers(gossip::ExchangeMode::local_sgd, 2, 4, false, 0.7, 0.9);
  const auto overlapped = run_peers(gossip::ExchangeMode::local_sgd, 2, 4, true, 0.7, 0.9);
  const auto landing = run_peers(gossip::ExchangeMode::local_sgd, 2, 4, true, 0.7, 0.9, 1);
  const auto again = run_peers(gossip::ExchangeMode::local_sgd, 2, 4, true, 0.7, 0.9, 1);
  BOOST_TEST(identical(strict));
  BOOST_TEST(identical(overlapped));
  BOOST_TEST(identical(landing));
  BOOST_TEST(overlapped[0].train.model_checksum != strict[0].train.model_checksum);
  BOOST_TEST(landing[0].train.model_checksum != overlapped[0].train.model_checksum);
  BOOST_TEST(landing[0].train.model_checksum == again[0].train.model_checksum);
  BOOST_TEST(min_accuracy(strict) > 0.85);
  BOOST_TEST(min_accuracy(overlapped) > min_accuracy(strict) - 0.05);
  BOOST_TEST(min_accuracy(landing) > min_accuracy(strict) - 0.05);
}

BOOST_AUTO_TEST_CASE(overlapped_allreduce_and_gossip_train_on_three_peers) {
  const auto allreduce = run_peers(gossip::ExchangeMode::allreduce, 3, 1, true);
  BOOST_TEST(identical(allreduce));
  BOOST_TEST(min_accuracy(allreduce) > 0.85);
  const auto gossip = run_peers(gossip::ExchangeMode::gossip, 3, 1, true);
  BOOST_TEST(min_accuracy(gossip) > 0.85);
  // How far the arriving mixes moved their snapshots: measured, and neighbours differ.
  for (const auto& r : gossip) {
    int measured = 0;
    for (const auto& point : r.train.history)
      if (point.consensus_distance) {
        ++measured;
        BOOST_TEST(*point.consensus_distance > 0.0);
        BOOST_TEST(*point.consensus_distance < 1.0);
      }
    BOOST_TEST(measured > 0);
  }
}
