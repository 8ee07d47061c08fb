// Exact diffusion against D-PSGD on the heterogeneous least-squares job of the gradient-
// tracking test (least_squares_job.h): six peers on a ring over real ZeroMQ sockets on
// loopback, one local SGD step of a constant size between exchanges. Exact diffusion reaches
// the global optimum at D-PSGD's bytes per round; a fresh start for a smaller view still
// converges exactly, and a state put back from state() continues bit for bit.
#define BOOST_TEST_MODULE exact_diffusion
#include <boost/test/unit_test.hpp>

#include <vector>

#include "gossip/algorithms/exact_diffusion_sync.h"
#include "least_squares_job.h"

using namespace starling::gossip;
using namespace starling::gossip::testing;

namespace {

Plan exact_diffusion(int rounds) {
  Plan plan;
  plan.mode = ExchangeMode::exact_diffusion;
  plan.rounds = rounds;
  return plan;
}

}  // namespace

BOOST_AUTO_TEST_CASE(exact_diffusion_reaches_the_optimum_where_dpsgd_stays_biased) {
  const Problem problem;
  const std::vector<double> optimum = problem.optimum(0, kPeers);
  const double exact = worst_error(run_job(problem, exact_diffusion(600)), optimum, kPeers);
  Plan dpsgd;
  dpsgd.mode = ExchangeMode::gossip;
  const double biased = worst_error(run_job(problem, dpsgd), optimum, kPeers);
  BOOST_TEST_MESSAGE("exact diffusion " << exact << ", D-PSGD " << biased << " (relative to the optimum)");
  BOOST_TEST(exact < 1e-4);
  BOOST_TEST(biased > 1e-2);
}

BOOST_AUTO_TEST_CASE(a_fresh_start_for_a_smaller_view_converges_to_its_optimum) {
  const Problem problem;
  Plan plan = exact_diffusion(800);
  plan.change_at = 200;
  plan.leave = true;
  const double error = worst_error(run_job(problem, plan), problem.optimum(0, kPeers - 1), kPeers - 1);
  BOOST_TEST_MESSAGE("five peers after the view change: " << error);
  BOOST_TEST(error < 1e-4);
}

BOOST_AUTO_TEST_CASE(a_state_put_back_continues_bit_for_bit) {
  expect_state_continues_bit_for_bit(Problem(), exact_diffusion(100), 60);
}

BOOST_AUTO_TEST_CASE(the_lazy_schedule_halves_every_weight_toward_oneself) {
  MixingPlan plan;
  plan.self_weight = 0.2;
  plan.receive_from = {{1, 0.5}, {2, 0.3}};
  const MixingPlan lazy = lazy_schedule([plan](std::uint64_t) { return plan; })(7);
  BOOST_TEST(lazy.self_weight == 0.6);
  BOOST_TEST(lazy.receive_from[0].second == 0.25);
  BOOST_TEST(lazy.receive_from[1].second == 0.15);
}
