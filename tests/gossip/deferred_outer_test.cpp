// Deferred outer steps (gossip/algorithms/deferred_outer_sync.h) on three peers over
// loopback ZeroMQ: peers 0 and 1 report one second of compute per pseudo-gradient, peer 2
// four, and peer 2 takes a while longer for its first, so that it has heard the others'
// plans for round 1 when it sends its own: its next pseudo-gradient is deferred by ⌈1.25 ×
// 4⌉ = 5 rounds. Every peer's "training" moves its model by a fixed vector δ_p from the x₀ it
// was handed, so each pseudo-gradient is δ_p, and the outer steps are checked against the
// rule computed in double: round 1 averages all three, rounds 2–5 the fast two, round 6 all
// three with peer 2's pseudo-gradient from round 2 (staleness 4). All three end on the same bits, with a
// lossy codec too; a slow peer's run spans the rounds it missed and returns the job's
// iteration; only a round's contributors publish its digest.
#define BOOST_TEST_MODULE gossip_deferred_outer
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gossip/algorithms/deferred_outer_sync.h"
#include "peer_group.h"

using namespace starling::gossip;
using starling::gossip::testing::PeerGroup;

namespace {

constexpr std::size_t kLength = 300000;  // two segments of 1 MiB of floats, the second ragged
constexpr int kPeers = 3, kRounds = 6;   // deferred rounds after the first (plain) one
constexpr std::uint64_t kPeriod = 50;    // iterations per pseudo-gradient

float initial(int p, std::size_t i) { return static_cast<float>(p) + 0.001f * static_cast<float>(i % 13); }
float delta(int p, std::size_t i) { return 0.01f * static_cast<float>(p + 1) * std::sin(0.001f * static_cast<float>(i)); }

struct PeerRun {
  std::vector<float> model;
  std::vector<RoundSpan> spans;  // of every run after the first
};

ExchangeSpec spec_for(const std::string& codec, bool staleness_scaling) {
  ExchangeSpec spec;
  spec.mode = ExchangeMode::local_sgd;
  spec.defer_slow_peers = true;
  spec.outer_lr = 0.7;
  spec.outer_momentum = 0.9;
  spec.codec = codec;
  spec.codec_options.set("bits", 4);
  spec.staleness_scaling = staleness_scaling;
  spec.timeout = std::chrono::seconds(20);
  return spec;
}

// Each peer: the first run, then runs until it has covered kRounds rounds, its model moved by
// δ_p before each; then it finishes.
std::vector<PeerRun> run_job(const ExchangeSpec& spec) {
  PeerGroup group(kPeers);
  group.connect_all();
  std::vector<PeerRun> out(kPeers);
  group.run_all([&](int p) {
    PeerRun& run = out[static_cast<std::size_t>(p)];
    run.model.resize(kLength);
    for (std::size_t i = 0; i < kLength; ++i) run.model[i] = initial(p, i);
    SyncSetup setup{group.at(p), spec, group.ids(), p, 0, starling::protocols::Span<float>(run.model), spec.codec_options};
    DeferredOuterSync algorithm(setup);
    BOOST_REQUIRE(algorithm.run(0.0, 0).status == RoundResult::done);
    std::uint64_t covered = 0, iteration = 0;
    while (covered < kRounds) {
      for (std::size_t i = 0; i < kLength; ++i) run.model[i] -= delta(p, i);
      iteration += kPeriod;
      if (p == 2 && covered == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const RoundResult result = algorithm.run(p == 2 ? 4.0 : 1.0, iteration);
      BOOST_REQUIRE_MESSAGE(result.status == RoundResult::done, "peer " << p << ": " << result.why);
      run.spans.push_back(algorithm.span());
      covered += run.spans.back().rounds;
      if (run.spans.back().iteration) iteration = *run.spans.back().iteration;
    }
    algorithm.finish(iteration);
  });
  return out;
}

// x₀ after the six rounds by the rule, in double.
std::vector<double> reference(bool staleness_scaling) {
  const double lr = 0.7, beta = 0.9;
  std::vector<double> x0(kLength), u(kLength, 0.0);
  for (std::size_t i = 0; i < kLength; ++i)
    x0[i] = (static_cast<double>(initial(0, i)) + initial(1, i) + initial(2, i)) / 3.0;
  for (int r = 1; r <= kRounds; ++r) {
    const bool slow = r == 1 || r == kRounds;  // peer 2's pseudo-gradients: round 1's, and round 2's at round 6
    const double w2 = !slow ? 0.0 : (r == kRounds && staleness_scaling ? 1.0 / (1 + (kRounds - 2)) : 1.0);
    for (std::size_t i = 0; i < kLength; ++i) {
      const double mean = (static_cast<double>(delta(0, i)) + delta(1, i) + w2 * delta(2, i)) / (2.0 + w2);
      u[i] = beta * u[i] + mean;
      x0[i] -= lr * (mean + beta * u[i]);
    }
  }
  return x0;
}

void expect_same_bits(const std::vector<PeerRun>& out) {
  for (int p = 1; p < kPeers; ++p)
    BOOST_TEST(std::memcmp(out[p].model.data(), out[0].model.data(), kLength * sizeof(float)) == 0,
               "peer " << p << " ends with another model than peer 0");
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_fast_peers_go_on_and_the_slow_peers_pseudo_gradient_lands_late) {
  for (bool scaling : {false, true}) {
    const std::vector<PeerRun> out = run_job(spec_for("none", scaling));
    expect_same_bits(out);
    const std::vector<double> want = reference(scaling);
    double worst = 0.0;
    for (std::size_t i = 0; i < kLength; ++i) worst = std::max(worst, std::abs(out[0].model[i] - want[i]));
    BOOST_TEST(worst < 1e-5, "staleness scaling " << scaling << ": off the rule by " << worst);
    // The fast peers: one round a run; the digests of rounds 2-5 come from them alone.
    BOOST_TEST(out[0].spans.size() == static_cast<std::size_t>(kRounds));
    BOOST_TEST(out[0].spans[0].published_by == (std::vector<PeerId>{0, 1, 2}));
    BOOST_TEST(out[0].spans[1].published_by == (std::vector<PeerId>{0, 1}));
    BOOST_TEST(out[0].spans[kRounds - 1].published_by == (std::vector<PeerId>{0, 1, 2}));
    // The slow peer: round 1, then one run over rounds 2-6 that lands at the job's iteration.
    BOOST_TEST_REQUIRE(out[2].spans.size() == 2u);
    BOOST_TEST(out[2].spans[1].rounds == 5u);
    BOOST_TEST(out[2].spans[1].iteration.value_or(0) == kRounds * kPeriod);
  }
}

BOOST_AUTO_TEST_CASE(with_a_lossy_codec_every_peer_still_ends_on_the_same_bits) {
  const std::vector<PeerRun> out = run_job(spec_for("qsgd", true));
  expect_same_bits(out);
  const std::vector<double> want = reference(true);
  double worst = 0.0;
  for (std::size_t i = 0; i < kLength; ++i) worst = std::max(worst, std::abs(out[0].model[i] - want[i]));
  BOOST_TEST(worst < 0.05, "4-bit pseudo-gradients drift from the exact rule by " << worst);
  BOOST_TEST(worst > 0.0);
}
