// One state (gossip/control/state_hashes.h): in all-reduce and DiLoCo-style outer steps every
// member's state digest agrees after every round; a member whose model and outer state lose
// one bit after a round is named by every member at the next round, takes the majority's
// state, and the run ends on one state; with no majority (two members) the disagreement is
// logged and nobody's state is replaced. Every peer is a thread with its own PeerExchange on
// ipc:// endpoints in a fresh folder.
#define BOOST_TEST_MODULE gossip_state_agreement
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gossip/control/state_hashes.h"
#include "gossip/peer_exchange.h"
#include "tests/gossip/faults.h"
#include "tests/gossip/ipc_job.h"

using namespace starling::gossip;
using namespace std::chrono_literals;
using starling::protocols::Span;
using starling::gossip::testing::any_contains;
using starling::gossip::testing::flip_low_bit;
using starling::gossip::testing::Job;

namespace {

constexpr std::size_t kLength = 3000;
constexpr std::size_t kFlipped = 1234;  // the element whose lowest mantissa bit a fault flips

// The common-model algorithms: the ring all-reduce, DiLoCo's outer step (exact mean), the
// top-k compressed all-reduce (its common base is shared state too).
enum class Outer { none, diloco, topk };

struct Fault {
  int peer = -1;  // none
  std::uint64_t round = 0;
  int liar = -1;  // a peer that flips a bit in every chunk of state it hands over; none
  std::chrono::milliseconds late_vouch{0};  // how late every other peer vouches for a joiner's model
};

// What one peer ended with.
struct Outcome {
  std::vector<float> model;
  StateCheck check;
  std::map<std::string, std::uint64_t> drops;
  std::vector<PeerId> members;
  std::vector<std::string> warnings;
  std::vector<std::string> events;
  std::string error;
};

ExchangeSpec spec_of(const Job& job, int rank, Outer outer, Fault fault) {
  ExchangeSpec s = job.spec(rank);
  s.failure_timeout = 3000ms;
  if (outer == Outer::diloco) s.outer_lr = 0.7, s.outer_momentum = 0.9;
  if (outer == Outer::topk) s.codec = "topk";
  if (fault.liar == rank) s.fault_in_served = [](std::vector<float>& chunk) { flip_low_bit(chunk[chunk.size() / 2]); };
  else s.vouch_delay = fault.late_vouch;
  if (fault.peer == rank)
    s.fault_after_round = [fault](std::uint64_t round, Span<float> model, const std::vector<Span<float>>& shared) {
      if (round != fault.round) return;
      flip_low_bit(model[kFlipped]);
      for (const Span<float>& part : shared) flip_low_bit(part[kFlipped]);
    };
  return s;
}

// Trains a pretend model (every peer adds its own drift each round) for `rounds` rounds;
// `rounds_done`, when given, follows the rounds this peer has completed.
Outcome run_peer(ExchangeSpec spec, int rounds, std::atomic<std::uint64_t>* rounds_done = nullptr) {
  Outcome out;
  out.model.assign(kLength, static_cast<float>(spec.rank));
  std::mutex mutex;
  spec.on_warning = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    out.warnings.push_back(line);
  };
  spec.on_event = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    out.events.push_back(line);
  };
  try {
    PeerExchange exchange(spec, Span<float>(out.model));
    std::uint64_t iteration = 0;
    if (const auto at = exchange.start(0)) iteration = at->iteration;
    while (iteration < static_cast<std::uint64_t>(rounds)) {
      for (std::size_t i = 0; i < kLength; ++i) out.model[i] += 0.001f * static_cast<float>((spec.rank + 1) * (i % 7));
      std::this_thread::sleep_for(2ms);  // computing
      ++iteration;
      if (const auto moved = exchange.exchange(iteration)) iteration = moved->iteration;
      if (rounds_done) rounds_done->store(iteration);
    }
    exchange.finish();
    out.check = exchange.state_check();
    out.drops = exchange.drops();
    out.members = exchange.members();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

std::vector<Outcome> run_job(int p, int rounds, Outer outer, Fault fault = {}) {
  const Job job(p, ExchangeMode::allreduce);
  std::vector<Outcome> out(static_cast<std::size_t>(p));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] { out[static_cast<std::size_t>(r)] = run_peer(spec_of(job, r, outer, fault), rounds); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < p; ++r) BOOST_TEST_REQUIRE(out[r].error.empty(), "peer " << r << ": " << out[r].error);
  return out;
}

// Every peer's last digests and final model are the same, and differ between rounds; but
// the faulty peer's digest of the fault's round, which differs from everyone else's.
void expect_one_state(const std::vector<Outcome>& out, std::size_t rounds, Fault fault = {}) {
  const std::size_t ref = fault.peer == 0 ? 1 : 0;  // a peer without the fault
  for (std::size_t r = 0; r < out.size(); ++r) {
    BOOST_TEST_REQUIRE(out[r].check.recent.size() == std::min(rounds, kRecentDigests));
    for (std::size_t i = 0; i < out[r].check.recent.size(); ++i) {
      const auto& [round, digest] = out[r].check.recent[i];
      BOOST_TEST(round == out[ref].check.recent[i].first);
      const bool faulty = static_cast<int>(r) == fault.peer && round == fault.round;
      BOOST_TEST((digest != out[ref].check.recent[i].second) == faulty,
                 "peer " << r << " at round " << round << (faulty ? ": the fault went unseen" : ": another state"));
    }
    BOOST_TEST(std::memcmp(out[r].model.data(), out[ref].model.data(), kLength * sizeof(float)) == 0,
               "peer " << r << " ends with another model than peer " << ref);
  }
  const auto& recent = out[ref].check.recent;
  for (std::size_t i = 1; i < recent.size(); ++i) BOOST_TEST(recent[i].second != recent[i - 1].second);
}

}  // namespace

BOOST_AUTO_TEST_CASE(judge_finds_the_majority_and_no_more) {
  const std::vector<PeerId> members{0, 1, 2, 3};
  StateVerdict v = judge({{0, 7}, {1, 7}, {2, 9}, {3, 7}}, members);
  BOOST_TEST(v.majority.value_or(0) == 7u);
  BOOST_TEST(v.differing == (std::vector<PeerId>{2}));
  BOOST_TEST(!v.agreed());
  v = judge({{0, 7}, {1, 7}, {2, 9}, {3, 9}}, members);  // a tie
  BOOST_TEST(!v.majority.has_value());
  BOOST_TEST(v.differing == members);
  v = judge({{0, 7}, {1, 7}, {3, 7}}, members);  // one missing: the reporters agree
  BOOST_TEST(v.agreed());
  BOOST_TEST(v.missing == (std::vector<PeerId>{2}));
  v = judge({{0, 7}, {1, 8}, {2, 9}}, {0, 1, 2});  // all different
  BOOST_TEST(!v.majority.has_value());
  v = judge({{0, 7}, {1, 7}, {2, 9}, {5, 9}}, {0, 1, 2});  // a non-member's vote does not count
  BOOST_TEST(v.majority.value_or(0) == 7u);
}

BOOST_AUTO_TEST_CASE(state_hashes_keep_the_last_rounds) {
  StateHashes h;
  for (std::uint64_t round = 0; round < 20; ++round) h.record(1, 2, round, round * 10);
  BOOST_TEST(h.of(2, 19).at(1) == 190u);
  BOOST_TEST(h.of(3, 19).empty());  // another view
  BOOST_TEST(h.of(2, 20 - kKeptRounds).size() == 1u);
  BOOST_TEST(h.of(2, 19 - kKeptRounds).empty());
  h.record(2, 2, 0, 5);  // older than everything kept: ignored
  BOOST_TEST(h.of(2, 0).empty());
  BOOST_TEST(h.complete(2, 19, {1}));
  BOOST_TEST(!h.complete(2, 19, {1, 2}));
  h.record(1, 3, 0, 7);  // a newer view, however low its round
  BOOST_TEST(h.of(3, 0).at(1) == 7u);
}

// A run of `p` peers without faults: every round checked, every digest the same.
void expect_agreement(int p, int rounds, Outer outer) {
  const std::vector<Outcome> out = run_job(p, rounds, outer);
  expect_one_state(out, static_cast<std::size_t>(rounds));
  for (const Outcome& o : out) {
    BOOST_TEST(o.check.rounds_checked == static_cast<std::uint64_t>(rounds));
    BOOST_TEST(o.check.disagreements == 0u);
    BOOST_TEST(o.check.heals == 0u);
    BOOST_TEST(o.warnings.empty());
  }
}

BOOST_AUTO_TEST_CASE(allreduce_peers_agree_every_round) { expect_agreement(4, 12, Outer::none); }
BOOST_AUTO_TEST_CASE(diloco_peers_agree_every_round) { expect_agreement(4, 12, Outer::diloco); }
BOOST_AUTO_TEST_CASE(compressed_allreduce_peers_agree_every_round) { expect_agreement(3, 10, Outer::topk); }

// A faulty run of `p` peers: every peer names the faulty one at the next round, which alone
// takes the majority's state; the run ends on one state.
void expect_named_and_healed(int p, int rounds, Outer outer, Fault fault) {
  const std::vector<Outcome> out = run_job(p, rounds, outer, fault);
  expect_one_state(out, static_cast<std::size_t>(rounds), fault);
  const std::string named = "peer(s) {" + std::to_string(fault.peer) + "} differ";
  const std::string when = "after round " + std::to_string(fault.round) + " ";
  for (int r = 0; r < p; ++r) {
    BOOST_TEST(out[r].check.disagreements == 1u, "peer " << r);
    BOOST_TEST(out[r].check.heals == (r == fault.peer ? 1u : 0u), "peer " << r);
    BOOST_TEST(any_contains(out[r].warnings, when, named), "peer " << r);
  }
  BOOST_TEST(any_contains(out[fault.peer].warnings, "took the majority's state of round " + std::to_string(fault.round) + " ", "from peer"));
}

// DiLoCo keeps x₀ and u on every member: a flipped bit there would stay for the rest of the
// run, so only healing brings the peers back to one state.
BOOST_AUTO_TEST_CASE(a_flipped_bit_in_diloco_state_is_named_and_healed) {
  expect_named_and_healed(4, 12, Outer::diloco, Fault{2, 5});
}

BOOST_AUTO_TEST_CASE(a_flipped_bit_after_an_allreduce_is_named_and_healed) {
  expect_named_and_healed(3, 10, Outer::none, Fault{1, 3});
}

BOOST_AUTO_TEST_CASE(a_flipped_bit_in_the_compressed_allreduce_base_is_named_and_healed) {
  expect_named_and_healed(3, 10, Outer::topk, Fault{0, 4});
}

// Two members that differ: neither is the majority, nobody's state is replaced. The next
// all-reduce averages both, so they agree again from the round after.
BOOST_AUTO_TEST_CASE(a_tie_is_logged_and_heals_nobody) {
  const std::vector<Outcome> out = run_job(2, 8, Outer::none, Fault{1, 4});
  expect_one_state(out, 8, Fault{1, 4});
  for (int r = 0; r < 2; ++r) {
    BOOST_TEST(out[r].check.disagreements == 1u, "peer " << r);
    BOOST_TEST(out[r].check.heals == 0u, "peer " << r);
    BOOST_TEST(any_contains(out[r].warnings, "after round 4 ", "no majority"), "peer " << r);
  }
}

// The healing peer takes the majority's state (model, x₀ and u: 17 chunks) from its three
// holders at once; peer 0 flips a bit in every chunk it serves. Its first chunk is caught by
// its digest, counted, and its chunks come from the other two holders.
BOOST_AUTO_TEST_CASE(a_holder_that_hands_over_a_wrong_state_is_passed_over) {
  const Fault fault{3, 5, 0};
  const std::vector<Outcome> out = run_job(4, 12, Outer::diloco, fault);
  expect_one_state(out, 12, fault);
  BOOST_TEST(out[3].check.heals == 1u);
  BOOST_TEST(any_contains(out[3].warnings, "peer 0 served chunk ", "it is not asked again"));
  BOOST_TEST(any_contains(out[3].warnings, "took the majority's state of round 5 ", "from peer(s) {1: "));
  BOOST_TEST(!any_contains(out[3].warnings, "took the majority's state", "{0: "));
  BOOST_TEST(out[3].drops.at("wrong_state_served") == 1u);
}

namespace {

// Item 4 of issue #50: a peer that joins a running job takes the model in chunks from the
// members that vouch for the digest most of them vouch for, all at once, and checks each
// chunk. The seeder of the view change (the lowest live member, peer 0) flips a bit in
// every chunk it serves: the joiner catches it at its first chunk, counts it, takes the
// model from the members that vouched with it, and every peer ends on one state. Returns
// what the joiner, peer 3, logged.
Outcome join_past_a_lying_seeder(std::chrono::milliseconds late_vouch) {
  const Job job(4, ExchangeMode::allreduce);
  const Fault fault{-1, 0, 0, late_vouch};
  std::vector<Outcome> out(4);
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> started{0};
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] { out[r] = run_peer(spec_of(job, r, Outer::none, fault), 1500, r == 0 ? &started : nullptr); });
  // Peer 3 comes once peers 0-2 have run a round without it, however long their start took.
  for (int wait = 0; wait < 6000 && started.load() == 0; ++wait) std::this_thread::sleep_for(10ms);
  BOOST_TEST(started.load() > 0u, "peers 0-2 ran no round within 60 s");
  threads.emplace_back([&] { out[3] = run_peer(spec_of(job, 3, Outer::none, fault), 1500); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 4; ++r) {
    BOOST_TEST_REQUIRE(out[r].error.empty(), "peer " << r << ": " << out[r].error);
    BOOST_TEST(out[r].members == (std::vector<PeerId>{0, 1, 2, 3}), "peer " << r);
    BOOST_TEST(std::memcmp(out[r].model.data(), out[0].model.data(), kLength * sizeof(float)) == 0, "peer " << r);
    BOOST_TEST(out[r].check.disagreements == 0u, "peer " << r);
  }
  BOOST_TEST(any_contains(out[3].warnings, "peer 0 served chunk ", "it is not asked again"));
  BOOST_TEST(out[3].drops.at("wrong_state_served") == 1u);
  BOOST_TEST(!any_contains(out[3].events, "took the model of iteration ", "{0: "));
  return out[3];
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_joiner_catches_a_seeder_that_flips_a_bit) {
  const Outcome joiner = join_past_a_lying_seeder(0ms);
  BOOST_TEST(any_contains(joiner.events, "took the model of iteration ", "from peer(s) {1: "));
  BOOST_TEST(any_contains(joiner.events, "took the model of iteration ", ", 2: "));
}

// The liar vouches first and the others after the joiner's grace: it takes the liar's
// chunks alone, catches them, waits for the late digests and takes the model from those.
BOOST_AUTO_TEST_CASE(a_joiner_waits_for_late_vouchers_when_the_first_lied) {
  const Outcome joiner = join_past_a_lying_seeder(1200ms);
  BOOST_TEST(any_contains(joiner.warnings, "peer 0 served chunk ", "waiting for the digests of the members not heard yet"));
  BOOST_TEST(any_contains(joiner.events, "took the model of iteration ", "from peer(s) {"));
}
