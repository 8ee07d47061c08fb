// NoLoCo (gossip/algorithms/noloco_sync.h) on real sockets, every peer a thread: the random
// pairs of a round are a partition of the members into groups of two (one of three when
// their count is odd), the same on every rank and new every round; two peers, always each
// other's partner, step exactly as the rule computed by hand says; eight peers pulling
// toward their own centres keep a mean that ends exactly at the mean centre (the fixed point
// of local SGD with averaging), with no all-reduce, and γ holds them together.
#define BOOST_TEST_MODULE gossip_noloco
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "gossip/algorithms/algorithm_table.h"
#include "gossip/algorithms/noloco_sync.h"
#include "peer_group.h"

using namespace starling::gossip;
using starling::gossip::testing::PeerGroup;

namespace {

ExchangeSpec noloco_spec(double lr, double momentum, double gamma) {
  ExchangeSpec spec;
  spec.mode = ExchangeMode::gossip;
  spec.outer_lr = lr;
  spec.outer_momentum = momentum;
  spec.gamma = gamma;
  spec.seed = 3;
  spec.timeout = std::chrono::seconds(20);
  return spec;
}

// Runs `rounds` rounds on every peer: `local(r, k, x)` moves peer r's model before round k.
template <class Local>
std::vector<std::vector<float>> run_noloco(const ExchangeSpec& spec, int peers, std::size_t dim, int rounds, Local local) {
  PeerGroup group(peers);
  group.connect_all();
  std::vector<std::vector<float>> xs(peers, std::vector<float>(dim, 0.0f));
  group.run_all([&](int r) {
    std::vector<float>& x = xs[r];
    const SyncSetup setup{group.at(r), spec, group.ids(), r, 0, starling::protocols::Span<float>{x.data(), dim}, {}, nullptr};
    const auto algorithm = make_sync_algorithm(setup);
    for (int k = 0; k < rounds; ++k) {
      local(r, k, x);
      const RoundResult result = algorithm->run();
      if (result.status != RoundResult::done) throw std::runtime_error("round " + std::to_string(k) + " failed: " + result.why);
    }
  });
  return xs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_pairs_partition_the_members_anew_every_round) {
  for (int p = 2; p <= 9; ++p) {
    std::set<std::vector<int>> partners_of_zero;
    for (std::uint64_t round = 0; round < 40; ++round) {
      std::vector<std::set<int>> groups(p);
      for (int r = 0; r < p; ++r) {
        const MixingPlan plan = random_pairs_schedule(p, r, 7)(round);
        groups[r].insert(r);
        for (int to : plan.send_to) groups[r].insert(to);
        BOOST_TEST(plan.send_to.size() == plan.receive_from.size());
        double weights = plan.self_weight;
        for (const auto& [from, w] : plan.receive_from) weights += w;
        BOOST_TEST(weights == 1.0, boost::test_tools::tolerance(1e-12));
        if (r == 0) partners_of_zero.insert(plan.send_to);
      }
      int threes = 0;
      for (int r = 0; r < p; ++r) {
        for (int m : groups[r]) BOOST_TEST((groups[m] == groups[r]), "p=" << p << " round " << round);  // symmetric
        threes += groups[r].size() == 3;
        BOOST_TEST((groups[r].size() == 2 || groups[r].size() == 3));
      }
      BOOST_TEST(threes == (p % 2 == 1 ? 3 : 0));
    }
    if (p > 3) BOOST_TEST(partners_of_zero.size() > 1u);  // the partner changes
  }
}

BOOST_AUTO_TEST_CASE(two_peers_step_as_the_rule_says) {
  const double a = 0.5, b = 0.7, g = 0.4;
  // Peer r's model before each round: round 0 sets φ = θ (fresh), rounds 1, 2 step.
  const auto theta = [](int r, int k, std::size_t i) { return static_cast<float>(0.3 * r - 0.2 * k + 0.05 * i + 0.1 * r * k); };
  const std::size_t dim = 3;
  const auto xs = run_noloco(noloco_spec(b, a, g), 2, dim, 3, [&](int r, int k, std::vector<float>& x) {
    for (std::size_t i = 0; i < dim; ++i) x[i] = theta(r, k, i);
  });
  for (std::size_t i = 0; i < dim; ++i) {
    double phi[2], delta[2] = {0, 0};
    for (int r = 0; r < 2; ++r) phi[r] = theta(r, 0, i);
    for (int k = 1; k < 3; ++k) {
      const double phi_mean = (phi[0] + phi[1]) / 2;
      const double pseudo = ((phi[0] - theta(0, k, i)) + (phi[1] - theta(1, k, i))) / 2;
      double next[2];
      for (int r = 0; r < 2; ++r) {
        delta[r] = a * delta[r] - b * pseudo - g * (phi[r] - phi_mean);
        next[r] = phi[r] + delta[r];
      }
      phi[0] = next[0], phi[1] = next[1];
    }
    for (int r = 0; r < 2; ++r) BOOST_TEST(xs[r][i] == phi[r], boost::test_tools::tolerance(1e-5));
  }
  BOOST_TEST(xs[0] != xs[1]);  // γ < 1 leaves the outer models apart
}

// Eight peers pulling toward their own centres (four local steps of 0.1 on ½‖x − c_r‖²).
struct Centres {
  static constexpr int peers = 8;
  static constexpr std::size_t dim = 256;
  std::vector<std::vector<float>> at;
  std::vector<double> mean;

  explicit Centres(float spread) : at(peers, std::vector<float>(dim)), mean(dim, 0.0) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> common(dim);
    for (float& c : common) c = u(rng);
    for (int r = 0; r < peers; ++r)
      for (std::size_t k = 0; k < dim; ++k) at[r][k] = common[k] + spread * u(rng), mean[k] += at[r][k] / peers;
  }

  std::vector<std::vector<float>> run(double gamma, int rounds = 300) const {
    return run_noloco(noloco_spec(0.7, 0.5, gamma), peers, dim, rounds, [&](int r, int, std::vector<float>& x) {
      for (int step = 0; step < 4; ++step)
        for (std::size_t i = 0; i < dim; ++i) x[i] -= 0.1f * (x[i] - at[r][i]);
    });
  }

  double distance(const std::vector<double>& x) const {
    double diff = 0.0, norm = 0.0;
    for (std::size_t k = 0; k < dim; ++k) diff += (x[k] - mean[k]) * (x[k] - mean[k]), norm += mean[k] * mean[k];
    return std::sqrt(diff / norm);
  }
};

std::vector<double> members_mean(const std::vector<std::vector<float>>& xs) {
  std::vector<double> m(xs[0].size(), 0.0);
  for (const auto& x : xs)
    for (std::size_t k = 0; k < m.size(); ++k) m[k] += x[k] / static_cast<double>(xs.size());
  return m;
}

// Pairs keep the members' mean, and the pseudo-gradients here are linear in the outer model:
// the mean moves as DiLoCo's heavy-ball outer step on the all-reduced pseudo-gradient and
// ends at the mean centre, exactly, however far apart the centres lie.
BOOST_AUTO_TEST_CASE(the_members_mean_reaches_the_mean_centre) {
  const Centres centres(1.0f);
  const auto xs = centres.run(0.5);
  const double error = centres.distance(members_mean(xs));
  BOOST_TEST_MESSAGE("the members' mean: " << error << " from the mean centre");
  BOOST_TEST(error < 1e-4);
}

// Alike centres: every peer ends at the centre. Far-apart ones: the peers scatter around it
// (each round's random pair pulls toward its own two centres), less with γ pulling the
// partners' outer models together than without.
BOOST_AUTO_TEST_CASE(every_peer_ends_at_a_common_centre_and_gamma_holds_the_peers_together) {
  const Centres alike(0.0f);
  for (const auto& x : alike.run(0.5)) BOOST_TEST(alike.distance({x.begin(), x.end()}) < 1e-4);
  const Centres apart(1.0f);
  const auto spread = [&](const std::vector<std::vector<float>>& xs) {
    const std::vector<double> m = members_mean(xs);
    double sum = 0.0;
    for (const auto& x : xs)
      for (std::size_t k = 0; k < m.size(); ++k) sum += (x[k] - m[k]) * (x[k] - m[k]);
    return std::sqrt(sum / xs.size());
  };
  const double held = spread(apart.run(0.5)), loose = spread(apart.run(0.0));
  BOOST_TEST_MESSAGE("spread around the members' mean: " << held << " with gamma 0.5, " << loose << " with 0");
  BOOST_TEST(held < 0.8 * loose);
}
