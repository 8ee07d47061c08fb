// SlowMo / DiLoCo's outer step on the all-reduce, driven through the synchronous interface on
// the heterogeneous least-squares job of least_squares_job.h (six peers, loopback ZeroMQ):
// with outer learning rate 1 and no outer momentum it is all-reduce (one local step per
// round) and local SGD (four) bit for bit; with outer momentum it takes another path to the
// same fixed point, which for one local step is the global optimum, every peer holding the
// same bits; a fresh optimizer for a smaller view reaches that view's optimum; its state put
// back into a rebuilt algorithm continues bit for bit. With a codec (DiLoCo on compressed
// pseudo-gradients: int8, 4-bit, top-k with 2-bit values, fp16, bf16, fp8) every peer still ends
// with the same bits near the same fixed point; at α = 1 and β = 0 it is the compressed
// all-reduce bit for bit; its state, error feedback included, continues bit for bit; and a
// 16-bit wire keeps its rounding errors (error feedback) rather than dropping them.
#define BOOST_TEST_MODULE outer_optimizer
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gossip/algorithms/compressed_allreduce_sync.h"
#include "gossip/algorithms/outer_optimizer_sync.h"
#include "least_squares_job.h"

using namespace starling::gossip;
using namespace starling::gossip::testing;

namespace {

std::unique_ptr<SyncAlgorithm> make_outer(const SyncSetup& setup) { return std::make_unique<OuterOptimizerSync>(setup); }

Plan averaging(int rounds, int local_steps = 1) {
  Plan plan;
  plan.mode = local_steps == 1 ? ExchangeMode::allreduce : ExchangeMode::local_sgd;
  plan.rounds = rounds;
  plan.local_steps = local_steps;
  return plan;
}

Plan with_outer_momentum(Plan plan, double momentum, double lr = 1.0, bool nesterov = true) {
  plan.outer_momentum = momentum;
  plan.outer_lr = lr;
  plan.outer_nesterov = nesterov;
  return plan;
}

std::vector<double> as_double(const std::vector<float>& x) { return {x.begin(), x.end()}; }

Plan with_codec(Plan plan, const std::string& codec, int bits = 8, int value_bits = 32, double density = 0.5) {
  plan.codec = codec;
  plan.codec_options.set("bits", bits);
  plan.codec_options.set("value_bits", value_bits);
  plan.codec_options.set("density", density);
  return plan;
}

struct CodecCase {
  const char* name;
  Plan (*apply)(Plan);
};

// The pseudo-gradient codecs of DiLoCo's compressed variants.
const CodecCase kCodecs[] = {
    {"int8", [](Plan p) { return with_codec(p, "qsgd", 8); }},
    {"4-bit", [](Plan p) { return with_codec(p, "qsgd", 4); }},
    {"top-k + 2-bit", [](Plan p) { return with_codec(p, "topk", 8, 2, 0.5); }},
    {"fp16", [](Plan p) { return with_codec(p, "fp16"); }},
    {"bf16", [](Plan p) { return with_codec(p, "bf16"); }},
    {"fp8", [](Plan p) { return with_codec(p, "fp8"); }},
};

}  // namespace

BOOST_AUTO_TEST_CASE(unit_lr_and_no_momentum_is_allreduce_and_local_sgd_bit_for_bit) {
  const Problem problem;
  for (int local_steps : {1, 4})
    for (bool nesterov : {true, false}) {
      Plan outer = with_outer_momentum(averaging(200, local_steps), 0.0, 1.0, nesterov);
      outer.make = make_outer;  // α = 1, β = 0, which the table would map to the plain all-reduce
      const auto a = run_job(problem, averaging(200, local_steps)), b = run_job(problem, outer);
      for (int r = 0; r < kPeers; ++r) BOOST_TEST(a[r] == b[r], boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(outer_momentum_takes_another_path_to_the_optimum) {
  const Problem problem;
  const std::vector<double> optimum = problem.optimum(0, kPeers);
  const auto plain_early = run_job(problem, averaging(10));
  for (bool nesterov : {true, false}) {
    const Plan outer = with_outer_momentum(averaging(600), 0.5, nesterov ? 1.0 : 0.8, nesterov);
    Plan early = outer;
    early.rounds = 10;
    const auto outer_early = run_job(problem, early), xs = run_job(problem, outer);
    const double error = worst_error(xs, optimum, kPeers);
    BOOST_TEST_MESSAGE((nesterov ? "Nesterov" : "heavy ball") << ": " << error << " from the optimum");
    BOOST_TEST(error < 1e-4);
    for (int r = 0; r < kPeers; ++r) {
      BOOST_TEST(plain_early[r] != outer_early[r]);
      BOOST_TEST(xs[r] == xs[0], boost::test_tools::per_element());  // one model, as under all-reduce
    }
  }
}

BOOST_AUTO_TEST_CASE(outer_momentum_on_local_sgd_reaches_local_sgds_fixed_point) {
  const Problem problem;
  const auto plain = run_job(problem, averaging(600, 4));
  const auto early = run_job(problem, averaging(10, 4));
  const Plan outer = with_outer_momentum(averaging(600, 4), 0.3);
  Plan outer_early = outer;
  outer_early.rounds = 10;
  const auto xs = run_job(problem, outer), xs_early = run_job(problem, outer_early);
  BOOST_TEST(xs_early[0] != early[0]);
  BOOST_TEST(relative_error(xs[0], as_double(plain[0])) < 1e-4);
}

BOOST_AUTO_TEST_CASE(a_fresh_optimizer_for_a_smaller_view_reaches_its_optimum) {
  Plan plan = with_outer_momentum(averaging(800), 0.5);
  plan.change_at = 200;
  plan.leave = true;
  const Problem problem;
  const double error = worst_error(run_job(problem, plan), problem.optimum(0, kPeers - 1), kPeers - 1);
  BOOST_TEST_MESSAGE("five peers after the view change: " << error);
  BOOST_TEST(error < 1e-4);
}

BOOST_AUTO_TEST_CASE(the_state_put_back_continues_bit_for_bit) {
  // Short of the optimum's float bits, where a fresh start could still end the same.
  expect_state_continues_bit_for_bit(Problem(), with_outer_momentum(averaging(40), 0.5, 0.7), 20);
}

// Peer i pulls toward its own centre c_i (f_i(x) = ½‖x − c_i‖², 4,096 entries, four local
// steps of 0.1 per round): every peer's local steps contract alike, so local SGD's fixed
// point, with or without the outer step, is the mean centre, which DiLoCo on compressed
// pseudo-gradients must reach too, every peer holding the same bits. Each iterate carries
// that round's compression error, which error feedback sends later, so the iterates' mean
// over the second half of the rounds is what must come close.
BOOST_AUTO_TEST_CASE(compressed_pseudo_gradients_reach_the_mean_centre_with_the_same_bits_everywhere) {
  constexpr int peers = 4, rounds = 150;
  constexpr std::size_t dim = 4096;
  std::vector<std::vector<float>> centre(peers, std::vector<float>(dim));
  std::vector<double> mean(dim, 0.0);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int r = 0; r < peers; ++r)
    for (std::size_t k = 0; k < dim; ++k) centre[r][k] = u(rng), mean[k] += centre[r][k] / peers;
  for (const CodecCase& c : kCodecs) {
    const Plan plan = c.apply(with_outer_momentum(averaging(rounds, 4), 0.5, 0.7));
    PeerGroup group(peers);
    group.connect_all();
    std::vector<std::vector<float>> xs(peers, std::vector<float>(dim, 0.0f));
    std::vector<double> average(dim, 0.0);
    bool same_bits = true;
    group.run_all([&](int r) {
      const ExchangeSpec spec = exchange_spec(plan);
      std::vector<float>& x = xs[r];
      const SyncSetup setup{group.at(r), spec, group.ids(), r, 0, starling::protocols::Span<float>{x.data(), dim}, plan.codec_options, nullptr};
      const auto algorithm = make_sync_algorithm(setup);
      for (int k = 0; k < rounds; ++k) {
        for (int step = 0; step < 4; ++step)
          for (std::size_t i = 0; i < dim; ++i) x[i] -= 0.1f * (x[i] - centre[r][i]);
        if (algorithm->run().status != RoundResult::done) throw std::runtime_error("round failed");
        if (r == 0 && k >= rounds / 2)
          for (std::size_t i = 0; i < dim; ++i) average[i] += x[i] / (rounds - rounds / 2);
      }
    });
    for (int r = 1; r < peers; ++r) same_bits = same_bits && xs[r] == xs[0];
    double diff = 0.0, norm = 0.0;
    for (std::size_t k = 0; k < dim; ++k) diff += (xs[0][k] - mean[k]) * (xs[0][k] - mean[k]), norm += mean[k] * mean[k];
    const double error = std::sqrt(diff / norm);
    double average_diff = 0.0;
    for (std::size_t k = 0; k < dim; ++k) average_diff += (average[k] - mean[k]) * (average[k] - mean[k]);
    const double average_error = std::sqrt(average_diff / norm);
    BOOST_TEST_MESSAGE(c.name << ": the last iterate " << error << " from the mean centre, the second half's mean " << average_error);
    BOOST_TEST(average_error < 1e-2, c.name);
    BOOST_TEST(same_bits, c.name);
  }
}

BOOST_AUTO_TEST_CASE(unit_lr_and_no_momentum_with_a_codec_is_the_compressed_allreduce_bit_for_bit) {
  const Problem problem;
  for (const CodecCase& c : kCodecs) {
    Plan outer = c.apply(averaging(100, 4));
    outer.make = make_outer;
    Plan compressed = outer;
    compressed.make = [](const SyncSetup& s) -> std::unique_ptr<SyncAlgorithm> { return std::make_unique<CompressedAllreduceSync>(s); };
    const auto a = run_job(problem, compressed), b = run_job(problem, outer);
    for (int r = 0; r < kPeers; ++r) BOOST_TEST(a[r] == b[r], boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(the_state_with_error_feedback_put_back_continues_bit_for_bit) {
  // 16-bit rounding is deterministic, so only x₀, u and the residual carry the run on.
  for (const char* codec : {"fp16", "bf16"})
    BOOST_TEST_CONTEXT(codec) {
      expect_state_continues_bit_for_bit(Problem(), with_codec(with_outer_momentum(averaging(40, 4), 0.5, 0.7), codec), 20);
    }
}

// The ring's 16-bit wire rounds every partial sum and the mean of each pseudo-gradient; what
// the rounding took stays in each peer's residual (the state after x₀ and u), bounded by a
// few ulps of the pseudo-gradients, and the next round sends it.
BOOST_AUTO_TEST_CASE(a_16_bit_wire_keeps_its_rounding_errors) {
  constexpr int peers = 4;
  constexpr std::size_t dim = 4096;
  for (const char* codec : {"fp16", "bf16"}) {
    BOOST_TEST_CONTEXT(codec) {
      const Plan plan = with_codec(with_outer_momentum(averaging(3, 4), 0.5, 0.7), codec);
      PeerGroup group(peers);
      group.connect_all();
      std::vector<std::vector<float>> xs(peers, std::vector<float>(dim, 0.0f)), states(peers);
      group.run_all([&](int r) {
        std::mt19937 rng(30 + r);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> centre(dim);
        for (float& c : centre) c = u(rng);
        const ExchangeSpec spec = exchange_spec(plan);
        std::vector<float>& x = xs[r];
        const auto algorithm = make_sync_algorithm(
            {group.at(r), spec, group.ids(), r, 0, starling::protocols::Span<float>{x.data(), dim}, plan.codec_options, nullptr});
        for (int k = 0; k < plan.rounds; ++k) {
          for (std::size_t i = 0; i < dim; ++i) x[i] -= 0.1f * (x[i] - centre[i]);
          if (algorithm->run().status != RoundResult::done) throw std::runtime_error("round failed");
        }
        states[r] = algorithm->state();
      });
      for (int r = 0; r < peers; ++r) {
        BOOST_TEST_REQUIRE(states[r].size() >= 3 * dim);
        std::size_t kept = 0;
        float largest = 0.0f;
        for (std::size_t i = 2 * dim; i < 3 * dim; ++i) {
          kept += states[r][i] != 0.0f;
          largest = std::max(largest, std::fabs(states[r][i]));
        }
        BOOST_TEST(kept > dim / 2, r << ": " << kept << " of " << dim << " entries keep a rounding error");
        // Pseudo-gradient entries are below 1 here, partial sums below p = 4: bf16 rounds each
        // of the p - 1 partial sums by at most 2^-7 and the mean by 2^-8 (scaled by p).
        BOOST_TEST(largest <= peers * 0x1p-6f, r << ": the largest kept error is " << largest);
      }
    }
  }
}

namespace {

enum class Kept { everything, without_draws };

// Four peers pulling toward their own centres in `dim` entries, DiLoCo with `plan`'s codec
// for `rounds` rounds; at round `rebuild_at` (if ≥ 0) every peer builds its algorithm anew
// from the old one's state, whole or with the codec streams' draws cut off. Peer 0's model.
std::vector<float> centres_job(const Plan& plan, std::size_t dim, int rounds, int rebuild_at, Kept kept) {
  constexpr int peers = 4;
  std::vector<std::vector<float>> centre(peers, std::vector<float>(dim)), xs(peers, std::vector<float>(dim, 0.0f));
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& c : centre)
    for (float& v : c) v = u(rng);
  PeerGroup group(peers);
  group.connect_all();
  group.run_all([&](int r) {
    const ExchangeSpec spec = exchange_spec(plan);
    std::vector<float>& x = xs[r];
    auto build = [&](std::uint64_t round) {
      return make_sync_algorithm({group.at(r), spec, group.ids(), r, round, {x.data(), dim}, plan.codec_options, nullptr});
    };
    auto algorithm = build(0);
    for (int k = 0; k < rounds; ++k) {
      if (k == rebuild_at) {
        std::vector<float> state = algorithm->state();
        if (kept == Kept::without_draws) state.resize(3 * dim);  // x₀, u and the residual
        algorithm = build(static_cast<std::uint64_t>(k));
        if (!algorithm->restore(state)) throw std::runtime_error("the state was refused");
      }
      for (int step = 0; step < 4; ++step)
        for (std::size_t i = 0; i < dim; ++i) x[i] -= 0.1f * (x[i] - centre[r][i]);
      if (algorithm->run().status != RoundResult::done) throw std::runtime_error("round failed");
    }
  });
  return xs[0];
}

}  // namespace

// Where the codec streams' random draws stand is part of the state: QSGD's stochastic
// rounding continues as in the uninterrupted run, so the resumed run ends with its bits; a
// state without the draws (as checkpoints before them kept) is still taken, and QSGD's
// rounding restarts. Top-k's draws (it samples for its cutoff above 32,768 entries a
// segment) are kept too, though its selection is exact whatever they are.
BOOST_AUTO_TEST_CASE(the_codec_streams_draws_put_back_continue_bit_for_bit) {
  constexpr std::size_t dim = 40000;
  for (const CodecCase& c : kCodecs) {
    BOOST_TEST_CONTEXT(c.name) {
      const Plan plan = c.apply(with_outer_momentum(averaging(8, 4), 0.5, 0.7));
      const std::vector<float> straight = centres_job(plan, dim, 8, -1, Kept::everything);
      BOOST_TEST((centres_job(plan, dim, 8, 4, Kept::everything) == straight));
      const bool rounds_at_random = plan.codec == "qsgd";
      BOOST_TEST((centres_job(plan, dim, 8, 4, Kept::without_draws) == straight) == !rounds_at_random);
    }
  }
}
