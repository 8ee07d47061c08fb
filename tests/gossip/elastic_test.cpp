// Peers that die and join while the exchange runs, every peer a thread with its own
// PeerExchange (ZeroMQ context, transport, control plane) on ipc:// endpoints, so that a
// peer can start late. A peer "dies" by dropping its PeerExchange without a word (its
// sockets close, as under SIGKILL). All-reduce survivors re-form the ring and end with
// identical bits; a new peer joins a running job, takes the model and position, and ends
// with the others; gossip survivors go on; below min_peers every survivor stops.
#define BOOST_TEST_MODULE gossip_elastic
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gossip/peer_exchange.h"
#include "tests/gossip/ipc_job.h"
#include "gossip/transport/error.h"

using namespace starling::gossip;
using namespace std::chrono_literals;
using starling::gossip::testing::Job;

namespace {

constexpr std::size_t kLength = 3000;

// What one peer's thread ended with.
struct Outcome {
  std::vector<float> model;
  std::uint64_t view_changes = 0;
  std::vector<PeerId> members;
  std::uint64_t first_iteration = 0;  // where it started (a joiner: where it joined)
  std::string error;
};

// Trains a pretend model for `rounds` rounds of one iteration each (every peer adds its own
// drift, then exchanges); with `die_after`, drops its exchange without a word after that many.
// With `hold`, waits that long between setting up its exchange (its heartbeats start) and
// starting, as a peer does that loads its data meanwhile.
Outcome run_peer(const ExchangeSpec& spec, int rounds, std::optional<int> die_after = std::nullopt,
                 std::chrono::milliseconds hold = 0ms) {
  Outcome out;
  out.model.assign(kLength, static_cast<float>(spec.rank));
  try {
    auto exchange = std::make_unique<PeerExchange>(spec, starling::protocols::Span<float>(out.model));
    std::this_thread::sleep_for(hold);
    std::uint64_t iteration = 0;
    if (const auto at = exchange->start(0)) iteration = at->iteration;
    out.first_iteration = iteration;
    while (iteration < static_cast<std::uint64_t>(rounds)) {
      if (die_after && iteration == static_cast<std::uint64_t>(*die_after)) return out;  // no goodbye
      for (std::size_t i = 0; i < kLength; ++i) out.model[i] += 0.001f * static_cast<float>((spec.rank + 1) * (i % 7));
      std::this_thread::sleep_for(2ms);  // computing
      ++iteration;
      if (const auto moved = exchange->exchange(iteration)) iteration = moved->iteration;
    }
    exchange->finish();
    out.view_changes = exchange->view_changes();
    out.members = exchange->members();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

void expect_identical(const std::vector<Outcome>& outcomes, const std::vector<int>& ranks) {
  for (int r : ranks) BOOST_TEST_REQUIRE(outcomes[r].error.empty(), "peer " << r << ": " << outcomes[r].error);
  for (int r : ranks)
    BOOST_TEST(std::memcmp(outcomes[r].model.data(), outcomes[ranks.front()].model.data(), kLength * sizeof(float)) == 0,
               "peer " << r << " ends with another model than peer " << ranks.front());
}

// Runs every peer of `job` on a thread of its own for `rounds` rounds; peer `victim` dies
// after `die_after` of them; `edit` adjusts every peer's spec.
std::vector<Outcome> run_job(const Job& job, int p, int rounds, int victim, int die_after,
                             const std::function<void(ExchangeSpec&)>& edit = {}) {
  std::vector<Outcome> out(static_cast<std::size_t>(p));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      ExchangeSpec spec = job.spec(r);
      if (edit) edit(spec);
      out[static_cast<std::size_t>(r)] = run_peer(spec, rounds, r == victim ? std::optional<int>(die_after) : std::nullopt);
    });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(allreduce_survivors_reform_the_ring_and_stay_identical) {
  const std::vector<Outcome> out = run_job(Job(4, ExchangeMode::allreduce), 4, 40, 3, 8);
  expect_identical(out, {0, 1, 2});
  for (int r : {0, 1, 2}) {
    BOOST_TEST(out[r].view_changes >= 1u);
    BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 1, 2}));
  }
}

BOOST_AUTO_TEST_CASE(a_new_peer_joins_a_running_allreduce_job) {
  Job job(4, ExchangeMode::allreduce);
  std::vector<Outcome> out(4);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) threads.emplace_back([&, r] { out[r] = run_peer(job.spec(r), 1500); });
  // Peer 3 starts once the others went on without it (the start timeout after the last of
  // them arrived), well before they end.
  std::this_thread::sleep_for(3500ms);
  threads.emplace_back([&] { out[3] = run_peer(job.spec(3), 1500); });
  for (auto& t : threads) t.join();
  expect_identical(out, {0, 1, 2, 3});
  BOOST_TEST(out[3].first_iteration > 0u, "the joiner started from the job's position");
  for (int r = 0; r < 4; ++r) BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 1, 2, 3}));
}

// The start race of issue #15: the late peer is heard (its heartbeats) before it starts,
// so the others go on and, on a ring of 5, the peers two hops away reach round 1 while
// its neighbours wait for it in round 0. It is a member of view 0 all along: it starts
// with them, no view changes, rather than take them for a running job and ask to join.
BOOST_AUTO_TEST_CASE(a_late_member_of_view_0_starts_with_the_others) {
  Job job(5, ExchangeMode::gossip);
  std::vector<Outcome> out(5);
  std::vector<std::thread> threads;
  auto spec = [&](int r) {
    ExchangeSpec s = job.spec(r);
    s.start_timeout = 10s;  // everyone is heard well within it
    return s;
  };
  for (int r = 0; r < 4; ++r) threads.emplace_back([&, r] { out[r] = run_peer(spec(r), 40); });
  threads.emplace_back([&] { out[4] = run_peer(spec(4), 40, std::nullopt, 1000ms); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 5; ++r) {
    BOOST_TEST_REQUIRE(out[r].error.empty(), "peer " << r << ": " << out[r].error);
    BOOST_TEST(out[r].view_changes == 0u, "peer " << r);
    BOOST_TEST(out[r].first_iteration == 0u, "peer " << r);
    BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 1, 2, 3, 4}));
  }
}

// Peers that arrive after the others started without them (start timeout, with a quorum)
// join the running job together and every peer ends in one view with all of them.
BOOST_AUTO_TEST_CASE(a_crowd_of_late_peers_joins_the_running_job) {
  Job job(6, ExchangeMode::gossip);
  std::vector<Outcome> out(6);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) threads.emplace_back([&, r] { out[r] = run_peer(job.spec(r), 1500); });
  std::this_thread::sleep_for(3500ms);  // past the start timeout: peers 0-2 run in view 1
  for (int r = 3; r < 6; ++r) threads.emplace_back([&, r] { out[r] = run_peer(job.spec(r), 1500); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 6; ++r) {
    BOOST_TEST_REQUIRE(out[r].error.empty(), "peer " << r << ": " << out[r].error);
    BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 1, 2, 3, 4, 5}), "peer " << r);
  }
  for (int r = 3; r < 6; ++r) BOOST_TEST(out[r].first_iteration > 0u, "peer " << r << " joined the running job");
}

BOOST_AUTO_TEST_CASE(gossip_survivors_go_on) {
  const std::vector<Outcome> out = run_job(Job(4, ExchangeMode::gossip), 4, 40, 1, 10);
  for (int r : {0, 2, 3}) {
    BOOST_TEST_REQUIRE(out[r].error.empty(), "peer " << r << ": " << out[r].error);
    BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 2, 3}));
  }
}

BOOST_AUTO_TEST_CASE(below_min_peers_every_survivor_stops) {
  const std::vector<Outcome> out =
      run_job(Job(3, ExchangeMode::allreduce), 3, 40, 2, 5, [](ExchangeSpec& spec) { spec.min_peers = 3; });
  for (int r : {0, 1}) BOOST_TEST(out[r].error.find("fewer than exchange.min_peers = 3") != std::string::npos, out[r].error);
}

BOOST_AUTO_TEST_CASE(async_gossip_goes_on_without_a_dead_neighbour) {
  const std::vector<Outcome> out = run_job(Job(4, ExchangeMode::async_gossip), 4, 200, 2, 20);
  for (int r : {0, 1, 3}) BOOST_TEST(out[r].error.empty(), "peer " << r << ": " << out[r].error);
}
