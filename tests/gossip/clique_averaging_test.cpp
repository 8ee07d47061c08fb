// Clique Averaging on D-Cliques (gossip/algorithms/clique_averaging_sync.h) against its
// math: eight peers, each holding one of four classes, each class a quadratic loss
// f_k(x) = a_k ‖x − c_k‖² / 2, so that the cliques of four hold every class once. Every
// round a peer takes one SGD step on its own loss, then one round of the algorithm.
// - Each round's result is computed by hand (in double) from the paper's update: the
//   clique's mean step, momentum on it (none, heavy ball, Nesterov), Metropolis–Hastings
//   mixing over the whole graph; over ZeroMQ on loopback and over the in-memory link.
// - The known answer: with a constant step every peer reaches the global optimum
//   Σ a_k c_k / Σ a_k exactly, where D-PSGD on the same graph stays a heterogeneity-dependent
//   distance away.
// - A round sends the change to the clique and the model to every neighbour; a rebuilt
//   algorithm given the old one's state continues bit for bit.
#define BOOST_TEST_MODULE clique_averaging
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gossip/algorithms/algorithm_table.h"
#include "gossip/algorithms/clique_averaging_sync.h"
#include "gossip/topology/d_cliques.h"
#include "gossip/transport/transport.h"
#include "least_squares_job.h"  // Barrier

using namespace starling::gossip;
using starling::gossip::testing::Barrier;

namespace {

constexpr int kPeers = 8;
constexpr int kClasses = 4;
constexpr int kDim = 3;
constexpr int kCliqueSize = 4;
constexpr double kStep = 0.2;

using Vec = std::vector<double>;

// Class k's loss a_k ‖x − c_k‖² / 2; peer r holds class r mod 4 only.
struct Losses {
  std::vector<double> a{1.0, 0.5, 2.0, 1.5};
  std::vector<Vec> c;

  Losses() {
    std::mt19937 rng(53);
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    for (int k = 0; k < kClasses; ++k) c.push_back({u(rng), u(rng), u(rng)});
  }
  int class_of(int peer) const { return peer % kClasses; }
  Vec gradient(int peer, const Vec& x) const {
    const int k = class_of(peer);
    Vec g(kDim);
    for (int i = 0; i < kDim; ++i) g[i] = a[k] * (x[i] - c[k][i]);
    return g;
  }
  Vec optimum() const {
    Vec x(kDim, 0.0);
    double total = 0.0;
    for (int k = 0; k < kClasses; ++k) {
      total += a[k];
      for (int i = 0; i < kDim; ++i) x[i] += a[k] * c[k][i];
    }
    for (double& v : x) v /= total;
    return x;
  }
};

// The spec every peer builds its algorithm from: D-Cliques over one-class histograms.
ExchangeSpec clique_spec(ExchangeMode mode, double momentum, bool nesterov, InterClique inter) {
  ExchangeSpec spec;
  spec.mode = mode;
  spec.topology = "d-cliques";
  spec.clique_size = kCliqueSize;
  spec.seed = 3;
  spec.inter_clique = inter;
  spec.clique_momentum = momentum;
  spec.clique_nesterov = nesterov;
  spec.timeout = std::chrono::seconds(20);
  for (int r = 0; r < kPeers; ++r) {
    spec.peers.push_back({static_cast<PeerId>(r), "tcp://127.0.0.1:" + std::to_string(7300 + r)});
    std::vector<double> counts(kClasses, 0.0);
    counts[r % kClasses] = 50.0;
    spec.label_counts.push_back(counts);
  }
  return spec;
}

DCliques cliques_of(const ExchangeSpec& spec) {
  TopologyOptions o;
  o.seed = spec.seed, o.clique_size = spec.clique_size, o.label_counts = spec.label_counts;
  o.inter_clique = spec.inter_clique;
  return build_d_cliques(kPeers, o);
}

// Eight transports on ZeroMQ (loopback) or on the in-memory link, each reaching every other.
class Network {
 public:
  explicit Network(bool in_memory) : context_(in_memory ? TransportContext(InMemory{}) : TransportContext(1)) {
    for (int r = 0; r < kPeers; ++r) {
      TransportOptions o;
      o.self = static_cast<PeerId>(r);
      o.bind_endpoint = in_memory ? "tcp://127.0.0.1:" + std::to_string(7300 + r) : "tcp://127.0.0.1:*";
      o.linger_ms = 200;
      for (int m = 0; m < kPeers; ++m) o.accept.push_back(static_cast<PeerId>(m));
      transports_.push_back(std::make_unique<Transport>(context_, o));
    }
    for (int r = 0; r < kPeers; ++r)
      for (int m = 0; m < kPeers; ++m)
        if (m != r) transports_[r]->connect(static_cast<PeerId>(m), transports_[m]->endpoint());
  }
  Transport& at(int r) { return *transports_[r]; }
  std::uint64_t bytes_received(int to, int from) {
    const TransportStats s = at(to).stats();
    const auto it = s.peers.find(static_cast<PeerId>(from));
    return it == s.peers.end() ? 0 : it->second.bytes_received;
  }

 private:
  TransportContext context_;  // declared first: outlives every transport
  std::vector<std::unique_ptr<Transport>> transports_;
};

struct Run {
  ExchangeSpec spec;
  int rounds = 5;
  bool in_memory = false;
  int rebuild_at = -1;      // every peer builds its algorithm anew before this round
  bool keep_state = false;  // ... and gives it the old one's state
};

std::vector<PeerId> everyone() {
  std::vector<PeerId> ids;
  for (int r = 0; r < kPeers; ++r) ids.push_back(static_cast<PeerId>(r));
  return ids;
}

// Every peer's model after the run, and the network it ran on (for its byte counts).
std::vector<std::vector<float>> run_job(const Losses& losses, const Run& run, Network* network = nullptr) {
  std::unique_ptr<Network> own;
  if (!network) own = std::make_unique<Network>(run.in_memory), network = own.get();
  Barrier barrier(kPeers);
  std::vector<std::vector<float>> out(kPeers, std::vector<float>(kDim, 0.0f));
  std::vector<std::exception_ptr> errors(kPeers);
  std::vector<std::thread> threads;
  for (int r = 0; r < kPeers; ++r)
    threads.emplace_back([&, r] {
      try {
        std::vector<float>& x = out[r];
        auto build = [&](std::uint64_t first_round) {
          SyncSetup setup{network->at(r), run.spec, everyone(), r, first_round,
                          starling::protocols::Span<float>{x.data(), x.size()}, {}, nullptr};
          return make_sync_algorithm(setup);
        };
        auto algorithm = build(0);
        for (int k = 0; k < run.rounds; ++k) {
          if (k == run.rebuild_at) {
            barrier.wait();  // the old algorithms are done with every message of theirs
            const std::vector<float> state = algorithm->state();
            algorithm = build(1000);
            if (run.keep_state && !algorithm->restore(state)) throw std::runtime_error("the state was refused");
          }
          const Vec g = losses.gradient(r, Vec(x.begin(), x.end()));
          for (int i = 0; i < kDim; ++i) x[i] = static_cast<float>(x[i] - kStep * g[i]);
          const RoundResult result = algorithm->run();
          if (result.status != RoundResult::done) throw std::runtime_error("round " + std::to_string(k) + ": " + result.why);
        }
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

// The same rounds by hand, in double: the paper's Algorithm 2 with momentum, one local SGD
// step a round, and a first round that averages the models over the clique.
std::vector<Vec> by_hand(const Losses& losses, const ExchangeSpec& spec, int rounds) {
  const DCliques d = cliques_of(spec);
  const DenseMatrix w = metropolis_weights(d.graph);
  std::vector<int> clique_of(kPeers);
  for (std::size_t k = 0; k < d.cliques.size(); ++k)
    for (int r : d.cliques[k]) clique_of[r] = static_cast<int>(k);
  auto clique_mean = [&](const std::vector<Vec>& v, int r) {
    const auto& clique = d.cliques[clique_of[r]];
    Vec mean(kDim, 0.0);
    for (int j : clique)
      for (int i = 0; i < kDim; ++i) mean[i] += v[j][i] / static_cast<double>(clique.size());
    return mean;
  };
  auto mix = [&](const std::vector<Vec>& y) {
    std::vector<Vec> x(kPeers, Vec(kDim, 0.0));
    for (int r = 0; r < kPeers; ++r)
      for (int j = 0; j < kPeers; ++j)
        for (int i = 0; i < kDim; ++i) x[r][i] += w(r, j) * y[j][i];
    return x;
  };
  const double mu = spec.clique_momentum;
  std::vector<Vec> x(kPeers, Vec(kDim, 0.0)), v(kPeers, Vec(kDim, 0.0));
  for (int k = 0; k < rounds; ++k) {
    std::vector<Vec> step(kPeers), y(kPeers);
    for (int r = 0; r < kPeers; ++r) {
      const Vec g = losses.gradient(r, x[r]);
      for (int i = 0; i < kDim; ++i) step[r].push_back(kStep * g[i]);
    }
    for (int r = 0; r < kPeers; ++r) {
      y[r] = x[r];
      if (k == 0) {  // fresh: the clique's mean of the stepped models
        std::vector<Vec> stepped(kPeers, Vec(kDim));
        for (int j = 0; j < kPeers; ++j)
          for (int i = 0; i < kDim; ++i) stepped[j][i] = x[j][i] - step[j][i];
        y[r] = clique_mean(stepped, r);
        continue;
      }
      const Vec mean = clique_mean(step, r);
      for (int i = 0; i < kDim; ++i) {
        v[r][i] = mu * v[r][i] + mean[i];
        y[r][i] -= spec.clique_nesterov ? mean[i] + mu * v[r][i] : v[r][i];
      }
    }
    x = mix(y);
  }
  return x;
}

double worst_distance(const std::vector<std::vector<float>>& xs, const Vec& to) {
  double worst = 0.0;
  for (const auto& x : xs) {
    double d = 0.0;
    for (int i = 0; i < kDim; ++i) d += (x[i] - to[i]) * (x[i] - to[i]);
    worst = std::max(worst, std::sqrt(d));
  }
  return worst;
}

void expect_by_hand(const Losses& losses, const Run& run) {
  const auto got = run_job(losses, run);
  const auto want = by_hand(losses, run.spec, run.rounds);
  for (int r = 0; r < kPeers; ++r)
    for (int i = 0; i < kDim; ++i) BOOST_TEST(got[r][i] == want[r][i], boost::test_tools::tolerance(2e-5));
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_cliques_of_the_test_hold_every_class) {
  for (InterClique inter : {InterClique::fully_connected, InterClique::small_world}) {
    const DCliques d = cliques_of(clique_spec(ExchangeMode::clique_averaging, 0.0, false, inter));
    BOOST_TEST_REQUIRE(d.cliques.size() == 2u);
    for (const auto& clique : d.cliques) {
      std::vector<int> classes;
      for (int r : clique) classes.push_back(r % kClasses);
      std::sort(classes.begin(), classes.end());
      BOOST_TEST(classes == (std::vector<int>{0, 1, 2, 3}), boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(each_round_is_the_clique_averaged_step_then_the_mix) {
  const Losses losses;
  Run run;
  run.rounds = 6;
  for (bool in_memory : {false, true}) {
    run.in_memory = in_memory;
    BOOST_TEST_CONTEXT((in_memory ? "in memory" : "zeromq")) {
      run.spec = clique_spec(ExchangeMode::clique_averaging, 0.0, false, InterClique::fully_connected);
      expect_by_hand(losses, run);
      run.spec = clique_spec(ExchangeMode::clique_averaging, 0.5, false, InterClique::fully_connected);
      expect_by_hand(losses, run);
      run.spec = clique_spec(ExchangeMode::clique_averaging, 0.5, true, InterClique::small_world);
      expect_by_hand(losses, run);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_constant_step_reaches_the_global_optimum_where_dpsgd_does_not) {
  const Losses losses;
  const Vec optimum = losses.optimum();
  Run run;
  run.rounds = 150;
  run.in_memory = true;
  run.spec = clique_spec(ExchangeMode::gossip, 0.0, false, InterClique::fully_connected);
  const double dpsgd = worst_distance(run_job(losses, run), optimum);
  BOOST_TEST_MESSAGE("D-PSGD's worst distance to the optimum: " << dpsgd);
  BOOST_TEST(dpsgd > 0.05);
  for (double mu : {0.0, 0.5}) {
    run.spec = clique_spec(ExchangeMode::clique_averaging, mu, mu > 0.0, InterClique::fully_connected);
    const double averaged = worst_distance(run_job(losses, run), optimum);
    BOOST_TEST_MESSAGE("Clique Averaging's at momentum " << mu << ": " << averaged);
    BOOST_TEST(averaged < 1e-4);
  }
}

BOOST_AUTO_TEST_CASE(a_round_sends_the_change_to_the_clique_and_the_model_to_every_neighbour) {
  const Losses losses;
  Run run;
  run.rounds = 4;
  run.spec = clique_spec(ExchangeMode::clique_averaging, 0.0, false, InterClique::fully_connected);
  const DCliques d = cliques_of(run.spec);
  std::vector<int> clique_of(kPeers);
  for (std::size_t k = 0; k < d.cliques.size(); ++k)
    for (int r : d.cliques[k]) clique_of[r] = static_cast<int>(k);
  Network network(true);
  run_job(losses, run, &network);
  // One vector's bytes, framed: what the one edge between the two cliques carried each round.
  std::uint64_t one_vector = 0;
  for (int r = 0; r < kPeers; ++r)
    for (int j : d.graph.neighbors(r))
      if (clique_of[j] != clique_of[r]) one_vector = network.bytes_received(r, j) / run.rounds;
  BOOST_TEST_REQUIRE(one_vector >= kDim * sizeof(float));
  for (int r = 0; r < kPeers; ++r)
    for (int j : d.graph.neighbors(r))
      BOOST_TEST(network.bytes_received(r, j) == (clique_of[j] == clique_of[r] ? 2u : 1u) * run.rounds * one_vector);
}

BOOST_AUTO_TEST_CASE(its_state_put_back_continues_bit_for_bit) {
  const Losses losses;
  Run plain;
  plain.rounds = 12;
  plain.in_memory = true;
  plain.spec = clique_spec(ExchangeMode::clique_averaging, 0.5, true, InterClique::fully_connected);
  Run rebuilt = plain;
  rebuilt.rebuild_at = 7;
  rebuilt.keep_state = true;
  Run fresh = rebuilt;
  fresh.keep_state = false;
  const auto a = run_job(losses, plain), b = run_job(losses, rebuilt), c = run_job(losses, fresh);
  for (int r = 0; r < kPeers; ++r) {
    BOOST_TEST(a[r] == b[r], boost::test_tools::per_element());
    BOOST_TEST(a[r] != c[r]);
  }
}

BOOST_AUTO_TEST_CASE(a_momentum_outside_zero_to_one_is_refused) {
  Network network(true);
  std::vector<float> x(kDim, 0.0f);
  const ExchangeSpec spec = clique_spec(ExchangeMode::clique_averaging, 1.0, false, InterClique::fully_connected);
  SyncSetup setup{network.at(0), spec, everyone(), 0, 0, starling::protocols::Span<float>{x.data(), x.size()}, {}, nullptr};
  BOOST_CHECK_THROW(CliqueAveragingSync{setup}, InvalidArgument);
}
