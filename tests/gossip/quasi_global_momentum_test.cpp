// Quasi-global momentum on D-PSGD, driven through the synchronous interface on the
// heterogeneous least-squares job of least_squares_job.h (six peers, a ring, loopback
// ZeroMQ): with μ = 0 it is D-PSGD bit for bit; with μ = 0.5 it takes another path to the
// same fixed point (the momentum vanishes where the models stop moving); its state put back
// into a rebuilt algorithm continues bit for bit.
#define BOOST_TEST_MODULE quasi_global_momentum
#include <boost/test/unit_test.hpp>

#include <memory>
#include <vector>

#include "gossip/algorithms/quasi_global_momentum_sync.h"
#include "least_squares_job.h"

using namespace starling::gossip;
using namespace starling::gossip::testing;

namespace {

std::unique_ptr<SyncAlgorithm> make_qgm(const SyncSetup& setup) { return std::make_unique<QuasiGlobalMomentumSync>(setup); }

Plan dpsgd(int rounds) {
  Plan plan;
  plan.mode = ExchangeMode::gossip;
  plan.rounds = rounds;
  return plan;
}

}  // namespace

BOOST_AUTO_TEST_CASE(zero_momentum_is_dpsgd_bit_for_bit) {
  const Problem problem;
  Plan qgm = dpsgd(200);
  qgm.make = make_qgm;  // μ = 0, which the table would map to plain D-PSGD
  const auto a = run_job(problem, dpsgd(200)), b = run_job(problem, qgm);
  for (int r = 0; r < kPeers; ++r) BOOST_TEST(a[r] == b[r], boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(momentum_takes_another_path_to_dpsgds_fixed_point) {
  const Problem problem;
  Plan qgm = dpsgd(600);
  qgm.quasi_global_momentum = 0.5;
  const auto early_plain = run_job(problem, dpsgd(10));
  Plan early = qgm;
  early.rounds = 10;
  const auto early_qgm = run_job(problem, early);
  const auto plain = run_job(problem, dpsgd(600)), with_momentum = run_job(problem, qgm);
  for (int r = 0; r < kPeers; ++r) {
    BOOST_TEST(early_plain[r] != early_qgm[r]);
    const std::vector<double> fixed_point(plain[r].begin(), plain[r].end());
    BOOST_TEST(relative_error(with_momentum[r], fixed_point) < 1e-4);
  }
}

BOOST_AUTO_TEST_CASE(momentum_put_back_from_its_state_continues_bit_for_bit) {
  Plan plain = dpsgd(100);
  plain.quasi_global_momentum = 0.5;
  expect_state_continues_bit_for_bit(Problem(), plain, 60);
}
