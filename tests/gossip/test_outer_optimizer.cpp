// SlowMo / DiLoCo's outer step on the all-reduce, driven through the synchronous interface on
// the heterogeneous least-squares job of least_squares_job.h (six peers, loopback ZeroMQ):
// with outer learning rate 1 and no outer momentum it is all-reduce (one local step per
// round) and local SGD (four) bit for bit; with outer momentum it takes another path to the
// same fixed point, which for one local step is the global optimum, every peer holding the
// same bits; a fresh optimizer for a smaller view reaches that view's optimum; its state put
// back into a rebuilt algorithm continues bit for bit.
#define BOOST_TEST_MODULE outer_optimizer
#include <boost/test/unit_test.hpp>

#include <memory>
#include <vector>

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
