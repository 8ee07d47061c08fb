// The exchange beside the compute (gossip/overlapped_exchange.h), every peer a thread with
// an OverlappedExchange of its own (its PeerExchange, ZeroMQ context, transport, control
// plane): a mix begun on a snapshot arrives one exchange late as z + (mixed − snapshot),
// exactly, keeping the steps taken meanwhile; the closing strict exchange leaves every
// all-reduce / local-SGD peer with identical bits; a peer that dies while the others' mix
// is in flight is left behind and the survivors still end identical; below min_peers the
// mix's error surfaces when it is awaited, with z untouched; a peer joining a running
// overlapped job takes its model and position and ends with the others.
#define BOOST_TEST_MODULE gossip_overlapped_exchange
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gossip/overlapped_exchange.h"
#include "gossip/transport/endpoint.h"
#include "gossip/transport/error.h"

using namespace starling::gossip;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kLength = 3000;

ExchangeSpec spec_of(ExchangeMode mode, const std::vector<std::string>& endpoints, int rank) {
  ExchangeSpec s;
  s.mode = mode;
  s.rank = rank;
  for (std::size_t i = 0; i < endpoints.size(); ++i) s.peers.push_back({static_cast<PeerId>(i), endpoints[i]});
  s.timeout = 20s;
  s.heartbeat = 100ms;
  s.failure_timeout = 1500ms;  // beside other suites on two cores
  s.start_timeout = 2000ms;
  s.min_peers = 2;
  return s;
}

// One mix as it arrived at an exchange point.
struct Arrival {
  std::vector<float> before, snapshot, mixed, after;
};

struct Outcome {
  std::vector<float> model;
  std::vector<Arrival> arrivals;
  std::vector<PeerId> members;
  std::uint64_t view_changes = 0;
  std::uint64_t first_iteration = 0;  // a joiner: where it joined
  bool one_mix_at_a_time = false;     // a second begin() was refused
  std::string error;
};

// What a peer does: `rounds` iterations; with `die_at` it drops its exchange without a word
// at that iteration, never beginning the mix the others have begun; `record` keeps every
// arrival.
struct Plan {
  explicit Plan(int rounds, std::optional<int> die_at = std::nullopt, bool record = false)
      : rounds(rounds), die_at(die_at), record(record) {}
  int rounds;
  std::optional<int> die_at;
  bool record;
};

// Trains a pretend model with an exchange point after every iteration: the mix in flight
// arrives, then the next begins beside the next step (strict after the last).
Outcome run_peer(const ExchangeSpec& spec, const Plan& plan) {
  const auto rounds = static_cast<std::uint64_t>(plan.rounds);
  Outcome out;
  out.model.assign(kLength, 0.0f);
  for (std::size_t i = 0; i < kLength; ++i) out.model[i] = static_cast<float>(spec.rank) + 0.01f * static_cast<float>(i % 11);
  float* z = out.model.data();
  try {
    OverlappedExchange exchange(spec, kLength);
    std::uint64_t iteration = 0;
    if (const auto at = exchange.start(z, 0)) iteration = at->iteration;
    out.first_iteration = iteration;
    while (iteration < rounds) {
      for (std::size_t i = 0; i < kLength; ++i) z[i] += 0.001f * static_cast<float>((spec.rank + 1) * (i % 7));
      std::this_thread::sleep_for(2ms);  // computing
      ++iteration;
      Arrival a;
      a.before = out.model;
      const bool arriving = exchange.pending();
      if (const auto moved = exchange.complete(z)) {
        iteration = moved->iteration;  // the job's model and position; its next point begins
        continue;
      }
      if (arriving && plan.record) {
        a.snapshot = exchange.snapshot(), a.mixed = exchange.mixed(), a.after = out.model;
        out.arrivals.push_back(std::move(a));
      }
      if (plan.die_at && iteration == static_cast<std::uint64_t>(*plan.die_at)) return out;  // no goodbye
      if (iteration == rounds) {
        if (const auto moved = exchange.exchange_now(z, iteration, 0.0)) iteration = moved->iteration;
        continue;
      }
      exchange.begin(z, iteration, 0.0);
      try {
        exchange.begin(z, iteration, 0.0);
      } catch (const InvalidArgument&) {
        out.one_mix_at_a_time = true;
      }
    }
    exchange.peers().finish();
    out.view_changes = exchange.peers().view_changes();
    out.members = exchange.peers().members();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// Every peer of `specs` on a thread of its own, peer r following plans[r].
std::vector<Outcome> run_job(const std::vector<ExchangeSpec>& specs, const std::vector<Plan>& plans) {
  std::vector<Outcome> out(specs.size());
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < specs.size(); ++r) threads.emplace_back([&, r] { out[r] = run_peer(specs[r], plans[r]); });
  for (auto& t : threads) t.join();
  return out;
}

std::vector<ExchangeSpec> job(ExchangeMode mode, int p) {
  const auto endpoints = starling::gossip::free_loopback_endpoints(p);
  std::vector<ExchangeSpec> specs;
  for (int r = 0; r < p; ++r) specs.push_back(spec_of(mode, endpoints, r));
  return specs;
}

void expect_identical(const std::vector<Outcome>& outcomes, const std::vector<int>& ranks) {
  for (int r : ranks) BOOST_TEST_REQUIRE(outcomes[r].error.empty(), "peer " << r << ": " << outcomes[r].error);
  for (int r : ranks)
    BOOST_TEST(std::memcmp(outcomes[r].model.data(), outcomes[ranks.front()].model.data(), kLength * sizeof(float)) == 0,
               "peer " << r << " ends with another model than peer " << ranks.front());
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_mix_arrives_one_exchange_late_and_the_strict_one_ends_identical) {
  constexpr int p = 3, rounds = 5;
  const Plan plan{rounds, std::nullopt, true};
  const std::vector<Outcome> out = run_job(job(ExchangeMode::local_sgd, p), {plan, plan, plan});
  expect_identical(out, {0, 1, 2});
  for (int r = 0; r < p; ++r) {
    BOOST_TEST(out[r].one_mix_at_a_time);
    BOOST_TEST_REQUIRE(out[r].arrivals.size() == static_cast<std::size_t>(rounds - 1));  // the first point has none
  }
  for (std::size_t k = 0; k < out[0].arrivals.size(); ++k) {
    double mean_error = 0.0, late_error = 0.0;
    bool same_mix = true;
    for (int r = 0; r < p; ++r) {
      const Arrival& a = out[r].arrivals[k];
      same_mix &= a.mixed == out[0].arrivals[k].mixed;  // all-reduce: identical bits on every peer
      for (std::size_t i = 0; i < kLength; ++i) {
        double mean = 0.0;
        for (int q = 0; q < p; ++q) mean += out[q].arrivals[k].snapshot[i] / p;
        mean_error = std::max(mean_error, std::abs(a.mixed[i] - mean));
        late_error = std::max(late_error, static_cast<double>(std::abs(a.after[i] - (a.before[i] + (a.mixed[i] - a.snapshot[i])))));
      }
      BOOST_TEST(a.before != a.snapshot);  // the steps taken meanwhile...
    }
    BOOST_TEST(same_mix, "round " << k);
    BOOST_TEST(mean_error < 1e-5, "round " << k);
    BOOST_TEST(late_error == 0.0, "round " << k);  // ...kept exactly: z + (mixed − snapshot)
  }
}

BOOST_AUTO_TEST_CASE(survivors_of_a_peer_dead_with_their_mix_in_flight_end_identical) {
  const std::vector<Outcome> out = run_job(job(ExchangeMode::allreduce, 3), {Plan{30}, Plan{30}, Plan{30, 8}});
  expect_identical(out, {0, 1});
  for (int r : {0, 1}) {
    BOOST_TEST(out[r].view_changes >= 1u);
    BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 1}));
  }
}

BOOST_AUTO_TEST_CASE(below_min_peers_the_error_surfaces_when_the_mix_is_awaited) {
  auto specs = job(ExchangeMode::local_sgd, 2);
  std::string error;
  std::vector<float> z(kLength, 1.0f), before;
  bool drained = false;
  std::thread victim([&] {
    OverlappedExchange exchange(specs[1], kLength);
    std::vector<float> mine(kLength, 2.0f);
    exchange.start(mine.data(), 0);  // then drops its exchange without a word
  });
  {
    OverlappedExchange exchange(specs[0], kLength);
    try {
      exchange.start(z.data(), 0);
      exchange.begin(z.data(), 1, 0.0);
      for (float& x : z) x += 0.5f;  // the learners go on
      before = z;
      exchange.complete(z.data());
    } catch (const TooFewPeers& e) {
      error = e.what();
    }
    drained = !exchange.pending();
  }
  victim.join();
  BOOST_TEST(error.find("fewer than exchange.min_peers = 2") != std::string::npos, error);
  BOOST_TEST(z == before);  // a failed mix changes nothing
  BOOST_TEST(drained);
}

// The joiner's endpoint must stay free until it starts: ipc, as in test_elastic.
BOOST_AUTO_TEST_CASE(a_new_peer_joins_a_running_overlapped_job) {
  const auto dir = std::filesystem::temp_directory_path() / ("starling-overlap-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> endpoints;
  for (int r = 0; r < 4; ++r) endpoints.push_back("ipc://" + (dir / std::to_string(r)).string());
  std::vector<Outcome> out(4);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) threads.emplace_back([&, r] { out[r] = run_peer(spec_of(ExchangeMode::allreduce, endpoints, r), Plan{1500}); });
  // Peer 3 starts once the others went on without it (the start timeout after the last of
  // them arrived), well before they end.
  std::this_thread::sleep_for(3500ms);
  threads.emplace_back([&] { out[3] = run_peer(spec_of(ExchangeMode::allreduce, endpoints, 3), Plan{1500}); });
  for (auto& t : threads) t.join();
  std::filesystem::remove_all(dir);
  expect_identical(out, {0, 1, 2, 3});
  BOOST_TEST(out[3].first_iteration > 0u, "the joiner started from the job's position");
  for (int r = 0; r < 4; ++r) BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 1, 2, 3}));
}
