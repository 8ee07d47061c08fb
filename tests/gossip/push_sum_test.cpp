// Push-sum (SGP, gossip/algorithms/push_sum_sync.h) on consensus alone: five peers (not a power of two)
// in one process over real ZeroMQ sockets on loopback, each starting from its own vector, no
// local steps, the algorithms driven directly. On a directed time-varying graph whose
// in-degrees differ from round to round, push-sum reaches the exact average of the initial
// vectors, while the same pushes without the weight (keep a share, add what arrives) do not.
// On SGP's one-peer exponential graph every round is a permutation, so the weight stays 1 and
// both reach the average; push-sum does there too. The state (x, w) put back into a rebuilt
// algorithm continues bit for bit, and a fresh one (w = 1 from the de-biased models) does not.
// A local change of one peer's model moves the average by exactly its share (SGP's step on
// the numerator; a step scaled by w would miss it by 4e-2).
#define BOOST_TEST_MODULE push_sum
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "gossip/algorithms/algorithm_table.h"
#include "gossip/algorithms/dpsgd_sync.h"
#include "gossip/algorithms/gossip_average.h"
#include "gossip/algorithms/push_sum_sync.h"
#include "gossip/topology/mixing_schedule.h"
#include "least_squares_job.h"

using namespace starling::gossip;
using namespace starling::gossip::testing;
namespace protocols = starling::protocols;

namespace {

constexpr int kN = 5;
constexpr int kLength = 3;

std::vector<std::vector<float>> initial_vectors() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  std::vector<std::vector<float>> xs(kN, std::vector<float>(kLength));
  for (auto& x : xs)
    for (float& v : x) v = u(rng);
  return xs;
}

std::vector<double> average(const std::vector<std::vector<float>>& xs) {
  std::vector<double> mean(kLength, 0.0);
  for (const auto& x : xs)
    for (int k = 0; k < kLength; ++k) mean[k] += static_cast<double>(x[k]) / kN;
  return mean;
}

// The largest ‖x_r − mean‖ / ‖mean‖ over the peers.
double worst_relative_error(const std::vector<std::vector<float>>& xs, const std::vector<double>& mean) {
  double norm = 0.0, worst = 0.0;
  for (double m : mean) norm += m * m;
  for (const auto& x : xs) {
    double diff = 0.0;
    for (int k = 0; k < kLength; ++k) diff += (x[k] - mean[k]) * (x[k] - mean[k]);
    worst = std::max(worst, std::sqrt(diff / norm));
  }
  return worst;
}

std::uint64_t mix(std::uint64_t round, int rank) {  // splitmix64 of (round, rank)
  std::uint64_t z = round * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(rank) * 0xBF58476D1CE4E5B9ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A directed graph drawn afresh each round, the same on every peer: every rank pushes to
// the next one (so every rank hears from someone each round and none runs ahead of the
// lockstep, gossip_average.h), and about half of them also to one more rank drawn at
// random. Shares of 1/2 and 1/3, in-degrees from 1 to 4: column-stochastic, not
// row-stochastic.
std::vector<int> random_out(int rank, std::uint64_t round) {
  const std::uint64_t z = mix(round, rank);
  std::vector<int> out{(rank + 1) % kN};
  if (z & 1) out.push_back(static_cast<int>((rank + 2 + (z >> 1) % (kN - 2)) % kN));
  return out;
}

using Schedule = std::function<MixingSchedule(int rank)>;
MixingSchedule directed(int rank) { return push_schedule(kN, rank, random_out); }
MixingSchedule one_peer(int rank) { return one_peer_exponential_schedule(kN, rank); }

enum class Kind { push_sum, plain };

// One round of something on x; `state` and `restore` only for push-sum.
struct Runner {
  std::unique_ptr<PushSumSync> push_sum;
  std::unique_ptr<GossipAverage> plain;
  void round(std::vector<float>& x) {
    // Not BOOST_REQUIRE: Boost.Test's checks are not safe on the peers' threads.
    if (push_sum) {
      const RoundResult result = push_sum->run();
      if (result.status != RoundResult::done) throw std::runtime_error("push-sum round failed: " + result.why);
    }
    else plain->run(protocols::Span<float>{x.data(), x.size()});
  }
};

struct Job {
  Kind kind = Kind::push_sum;
  Schedule schedule = directed;
  int rounds = 200;
  int rebuild_at = -1;      // every peer builds its algorithm anew before this round
  bool keep_state = false;  // and puts the old one's state back
  int nudge_at = -1;        // peer 0 adds kNudge to its model before this round (a local step)
};

const std::vector<float> kNudge = {5.0f, -3.0f, 1.0f};

std::vector<float> run_peer(PeerGroup& group, Barrier& barrier, const Job& job, int r, std::vector<float> x) {
  ExchangeSpec spec;
  spec.mode = ExchangeMode::push_sum;
  spec.timeout = std::chrono::seconds(20);
  auto build = [&](int first_round) {
    const SyncSetup setup{group.at(r), spec, members(kN), r, static_cast<std::uint64_t>(first_round),
                          protocols::Span<float>{x.data(), x.size()}, {}, nullptr};
    Runner run;
    if (job.kind == Kind::push_sum) run.push_sum = std::make_unique<PushSumSync>(setup, job.schedule(r));
    else run.plain = std::make_unique<GossipAverage>(group.at(r), members(kN), job.schedule(r), round_options<GossipOptions>(setup));
    return run;
  };
  Runner runner = build(0);
  for (int k = 0; k < job.rounds; ++k) {
    if (k == job.rebuild_at) {
      barrier.wait();  // no peer has sent anything of round k yet
      const std::vector<float> state = runner.push_sum->state();
      runner = build(k);
      if (job.keep_state && !runner.push_sum->restore(state)) throw std::runtime_error("the state was refused");
    }
    if (k == job.nudge_at && r == 0)
      for (int i = 0; i < kLength; ++i) x[i] += kNudge[i];
    runner.round(x);
  }
  return x;
}

std::vector<std::vector<float>> run_job(const Job& job) {
  PeerGroup group(kN);
  group.connect_all();
  Barrier barrier(kN);
  const auto start = initial_vectors();
  std::vector<std::vector<float>> out(kN);
  group.run_all([&](int r) { out[r] = run_peer(group, barrier, job, r, start[r]); });
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_directed_graph_has_unequal_in_degrees) {
  int uneven_rounds = 0;
  for (std::uint64_t k = 0; k < 200; ++k) {
    std::vector<int> in(kN, 0);
    for (int r = 0; r < kN; ++r)
      for (int to : random_out(r, k)) {
        BOOST_REQUIRE(to != r);
        ++in[to];
      }
    uneven_rounds += *std::max_element(in.begin(), in.end()) != *std::min_element(in.begin(), in.end());
  }
  BOOST_TEST(uneven_rounds > 150);
}

BOOST_AUTO_TEST_CASE(push_sum_reaches_the_exact_average_where_plain_pushes_do_not) {
  const std::vector<double> mean = average(initial_vectors());
  Job push_sum;
  Job plain;
  plain.kind = Kind::plain;
  const double exact = worst_relative_error(run_job(push_sum), mean);
  const double biased = worst_relative_error(run_job(plain), mean);
  BOOST_TEST_MESSAGE("random directed graph, 5 peers, 200 rounds: push-sum " << exact << ", plain " << biased);
  BOOST_TEST(exact < 1e-5);
  BOOST_TEST(biased > 1e-3);
}

// A local change d of one peer's de-biased model goes to its numerator whole (SGP's step on
// x), whatever its weight then: the average moves by d / n, exactly.
BOOST_AUTO_TEST_CASE(a_local_change_moves_the_average_by_its_share) {
  std::vector<double> mean = average(initial_vectors());
  for (int k = 0; k < kLength; ++k) mean[k] += static_cast<double>(kNudge[k]) / kN;
  Job job;
  job.nudge_at = 10;  // the weights are far from 1 by then
  const double error = worst_relative_error(run_job(job), mean);
  BOOST_TEST_MESSAGE("after a local change at round 10: push-sum " << error);
  BOOST_TEST(error < 1e-5);
}

// SGP's graph as push_schedule() builds it from the one-peer exponential out-neighbours:
// the plans of one_peer_exponential_schedule(), halves everywhere.
BOOST_AUTO_TEST_CASE(push_schedule_on_sgps_graph_is_the_one_peer_exponential_schedule) {
  const OutNeighbours sgp = [](int rank, std::uint64_t k) { return std::vector<int>{one_peer_exponential_out(kN, rank, k)}; };
  for (int r = 0; r < kN; ++r)
    for (std::uint64_t k = 0; k < 6; ++k) {
      const MixingPlan a = push_schedule(kN, r, sgp)(k), b = one_peer_exponential_schedule(kN, r)(k);
      BOOST_TEST(a.self_weight == b.self_weight);
      BOOST_TEST(a.send_to == b.send_to, boost::test_tools::per_element());
      BOOST_TEST((a.receive_from == b.receive_from));
    }
}

BOOST_AUTO_TEST_CASE(push_sum_on_the_one_peer_exponential_graph_reaches_the_average_with_w_1) {
  const std::vector<double> mean = average(initial_vectors());
  Job job;
  job.schedule = one_peer;
  job.rounds = 60;
  const double exact = worst_relative_error(run_job(job), mean);
  job.kind = Kind::plain;
  const double plain = worst_relative_error(run_job(job), mean);
  BOOST_TEST_MESSAGE("one-peer exponential graph, 5 peers, 60 rounds: push-sum " << exact << ", plain " << plain);
  BOOST_TEST(exact < 1e-5);
  BOOST_TEST(plain < 1e-5);  // each round a permutation: doubly stochastic, no bias to remove
}

BOOST_AUTO_TEST_CASE(the_configured_mode_builds_push_sum_with_its_weight_at_1_on_sgps_graph) {
  PeerGroup group(kN);
  group.connect_all();
  const auto start = initial_vectors();
  std::vector<std::vector<float>> weights(kN);
  group.run_all([&](int r) {
    ExchangeSpec spec;
    spec.mode = ExchangeMode::push_sum;
    spec.topology = "one-peer-exponential";
    spec.timeout = std::chrono::seconds(20);
    std::vector<float> x = start[r];
    const SyncSetup setup{group.at(r), spec, members(kN), r, 0, protocols::Span<float>{x.data(), x.size()}, {}, nullptr};
    const auto algorithm = make_sync_algorithm(setup);
    BOOST_REQUIRE(algorithm->state().empty());  // fresh
    for (int k = 0; k < 10; ++k) BOOST_REQUIRE(algorithm->run().status == RoundResult::done);
    weights[r] = algorithm->state();
  });
  for (const auto& state : weights) {
    BOOST_REQUIRE(state.size() == kLength + 1u);
    BOOST_TEST(state.back() == 1.0f);
  }
}

BOOST_AUTO_TEST_CASE(a_push_sum_state_put_back_continues_bit_for_bit) {
  Job straight;
  straight.rounds = 30;
  Job rebuilt = straight;
  rebuilt.rebuild_at = 6;
  rebuilt.keep_state = true;
  Job fresh = rebuilt;
  fresh.keep_state = false;
  const auto a = run_job(straight), b = run_job(rebuilt), c = run_job(fresh);
  for (int r = 0; r < kN; ++r) {
    BOOST_TEST(a[r] == b[r], boost::test_tools::per_element());
    BOOST_TEST(a[r] != c[r]);
  }
}

BOOST_AUTO_TEST_CASE(a_state_that_does_not_fit_is_refused) {
  PeerGroup group(1);
  ExchangeSpec spec;
  std::vector<float> x(kLength, 1.0f);
  const SyncSetup setup{group.at(0), spec, members(1), 0, 0, protocols::Span<float>{x.data(), x.size()}, {}, nullptr};
  PushSumSync algorithm(setup, [](std::uint64_t) { return MixingPlan{}; });
  BOOST_TEST(!algorithm.restore(std::vector<float>(kLength, 1.0f)));           // no weight
  BOOST_TEST(!algorithm.restore({1.0f, 2.0f, 3.0f, 0.0f}));                    // w = 0
  BOOST_TEST(!algorithm.restore({1.0f, 2.0f, 3.0f, std::nanf("")}));          // w not finite
  BOOST_TEST(algorithm.restore({1.0f, 2.0f, 3.0f, 0.5f}));
  BOOST_TEST(algorithm.state() == std::vector<float>({1.0f, 2.0f, 3.0f, 0.5f}), boost::test_tools::per_element());
}
