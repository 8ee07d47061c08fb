#pragma once
// Test harness: six peers on a ring in one process (real ZeroMQ sockets on loopback), each
// with its own least-squares problem, the local optima far apart (heterogeneous data). Every
// round a peer takes one SGD step of a constant size on its own problem, then runs one round
// of a synchronous exchange algorithm (sync_algorithm.h) built by a given maker (local SGD:
// `local_steps` steps between rounds).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gossip/algorithms/algorithm_table.h"
#include "gossip/algorithms/sync_algorithm.h"
#include "peer_group.h"

namespace starling::gossip::testing {


constexpr int kPeers = 6;
constexpr int kDim = 4;
constexpr int kRows = 8;
constexpr double kStep = 0.1;

// Peer i: f_i(x) = ‖A_i x − b_i‖² / (2 rows), b_i = A_i z_i + noise, z_i its own: uniform in
// ±3 by default (far apart), or a common centre plus ±`spread` (mildly heterogeneous).
struct Problem {
  std::vector<std::vector<double>> a, b;  // per peer: rows × dim, rows

  Problem() : Problem(3.0, false) {}
  explicit Problem(double spread) : Problem(spread, true) {}

  Problem(double spread, bool centred) : a(kPeers), b(kPeers) {
    std::mt19937 rng(2024), centre_rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> centre(kDim, 0.0);
    if (centred)
      for (double& v : centre) v = 3.0 * u(centre_rng);
    for (int i = 0; i < kPeers; ++i) {
      std::vector<double> z(kDim);
      for (int k = 0; k < kDim; ++k) z[k] = centre[k] + spread * u(rng);
      for (int r = 0; r < kRows; ++r) {
        double dot = 0.0;
        for (int k = 0; k < kDim; ++k) {
          a[i].push_back(std::sqrt(3.0) * u(rng));
          dot += a[i].back() * z[k];
        }
        b[i].push_back(dot + 0.5 * u(rng));
      }
    }
  }

  std::vector<double> gradient(int i, const std::vector<float>& x) const {
    std::vector<double> g(kDim, 0.0);
    for (int r = 0; r < kRows; ++r) {
      double residual = -b[i][r];
      for (int k = 0; k < kDim; ++k) residual += a[i][r * kDim + k] * x[k];
      for (int k = 0; k < kDim; ++k) g[k] += a[i][r * kDim + k] * residual / kRows;
    }
    return g;
  }

  // The minimiser of Σ_{first ≤ i < last} f_i: Gaussian elimination on the normal equations.
  std::vector<double> optimum(int first, int last) const {
    std::vector<std::vector<double>> m(kDim, std::vector<double>(kDim + 1, 0.0));
    for (int i = first; i < last; ++i)
      for (int r = 0; r < kRows; ++r)
        for (int p = 0; p < kDim; ++p) {
          for (int q = 0; q < kDim; ++q) m[p][q] += a[i][r * kDim + p] * a[i][r * kDim + q];
          m[p][kDim] += a[i][r * kDim + p] * b[i][r];
        }
    for (int c = 0; c < kDim; ++c) {
      std::swap(m[c], *std::max_element(m.begin() + c, m.end(), [&](auto& x, auto& y) { return std::abs(x[c]) < std::abs(y[c]); }));
      for (int r = 0; r < kDim; ++r)
        if (r != c) {
          const double f = m[r][c] / m[c][c];
          for (int q = c; q <= kDim; ++q) m[r][q] -= f * m[c][q];
        }
    }
    std::vector<double> x(kDim);
    for (int c = 0; c < kDim; ++c) x[c] = m[c][kDim] / m[c][c];
    return x;
  }
};

inline double relative_error(const std::vector<float>& x, const std::vector<double>& optimum) {
  double diff = 0.0, norm = 0.0;
  for (int k = 0; k < kDim; ++k) diff += (x[k] - optimum[k]) * (x[k] - optimum[k]), norm += optimum[k] * optimum[k];
  return std::sqrt(diff / norm);
}

// Every peer's thread waits here until all have arrived (C++17 has no std::barrier).
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const int generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0, ++generation_;
      return woken_.notify_all();
    }
    woken_.wait(lock, [&] { return generation != generation_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable woken_;
  int count_, arrived_ = 0, generation_ = 0;
};

// At round `change_at` every peer builds its algorithm anew, as for a new view: for the
// members left (the last peer leaves when `leave`), fresh or with the old one's state.
struct Plan {
  ExchangeMode mode = ExchangeMode::gradient_tracking;
  double quasi_global_momentum = 0.0;
  double outer_lr = 1.0, outer_momentum = 0.0;
  bool outer_nesterov = true;
  std::string codec = "none";
  protocols::CodecOptions codec_options;
  int local_steps = 1;
  std::function<std::unique_ptr<SyncAlgorithm>(const SyncSetup&)> make = make_sync_algorithm;
  int rounds = 600;
  int change_at = -1;
  bool leave = false;
  bool keep_state = false;
};

inline std::vector<PeerId> members(int count) {
  std::vector<PeerId> ids;
  for (int r = 0; r < count; ++r) ids.push_back(static_cast<PeerId>(r));
  return ids;
}

// The exchange a plan describes: its mode, quasi-global momentum, outer step and codec.
inline ExchangeSpec exchange_spec(const Plan& plan) {
  ExchangeSpec spec;
  spec.mode = plan.mode;
  spec.quasi_global_momentum = plan.quasi_global_momentum;
  spec.outer_lr = plan.outer_lr;
  spec.outer_momentum = plan.outer_momentum;
  spec.outer_nesterov = plan.outer_nesterov;
  spec.codec = plan.codec;
  spec.codec_options = plan.codec_options;
  return spec;
}

inline std::vector<float> run_peer(PeerGroup& group, const Problem& problem, Barrier& barrier, const Plan& plan, int r) {
  ExchangeSpec spec = exchange_spec(plan);
  spec.topology = "ring";
  spec.timeout = std::chrono::seconds(20);
  std::vector<float> x(kDim, 0.0f);
  auto build = [&](int count, int first_round) {
    SyncSetup setup{group.at(r), spec, members(count), r, static_cast<std::uint64_t>(first_round),
                    protocols::Span<float>{x.data(), x.size()}, plan.codec_options, nullptr};
    return plan.make(setup);
  };
  auto algorithm = build(kPeers, 0);
  for (int k = 0; k < plan.rounds; ++k) {
    if (k == plan.change_at) {
      barrier.wait();  // the old algorithms are done with every message of theirs
      if (plan.leave && r == kPeers - 1) return x;
      const std::vector<float> state = algorithm->state();
      algorithm = build(plan.leave ? kPeers - 1 : kPeers, k);
      if (plan.keep_state && !algorithm->restore(state)) throw std::runtime_error("the state was refused");
    }
    for (int step = 0; step < plan.local_steps; ++step) {
      const std::vector<double> g = problem.gradient(r, x);
      for (int i = 0; i < kDim; ++i) x[i] = static_cast<float>(x[i] - kStep * g[i]);
    }
    const RoundResult result = algorithm->run();
    if (result.status != RoundResult::done) throw std::runtime_error("round " + std::to_string(k) + ": " + result.why);
  }
  return x;
}

inline std::vector<std::vector<float>> run_job(const Problem& problem, const Plan& plan) {
  PeerGroup group(kPeers);
  group.connect_all();
  Barrier barrier(kPeers);
  std::vector<std::vector<float>> out(kPeers);
  group.run_all([&](int r) { out[r] = run_peer(group, problem, barrier, plan, r); });
  return out;
}

inline double worst_error(const std::vector<std::vector<float>>& xs, const std::vector<double>& optimum, int peers) {
  double worst = 0.0;
  for (int r = 0; r < peers; ++r) worst = std::max(worst, relative_error(xs[r], optimum));
  return worst;
}

// A job rebuilt at round `change_at` from its algorithms' state() ends with the same bits as
// one never rebuilt, and one rebuilt without the state differs (the state matters).
inline void expect_state_continues_bit_for_bit(const Problem& problem, const Plan& plain, int change_at) {
  Plan rebuilt = plain;
  rebuilt.change_at = change_at;
  rebuilt.keep_state = true;
  Plan fresh = rebuilt;
  fresh.keep_state = false;
  const auto a = run_job(problem, plain), b = run_job(problem, rebuilt), c = run_job(problem, fresh);
  for (int r = 0; r < kPeers; ++r) {
    BOOST_TEST(a[r] == b[r], boost::test_tools::per_element());
    BOOST_TEST(a[r] != c[r]);
  }
}

}  // namespace starling::gossip::testing
