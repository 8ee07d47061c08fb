// Optimizer steps and learning-rate schedules against values computed by hand.
#define BOOST_TEST_MODULE learners_optim
#include <boost/test/unit_test.hpp>

#include "learners/optimizer.h"
#include "learners/schedule.h"

#include <cmath>

using namespace starling;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(sgd_momentum_two_steps) {
  OptimizerSpec spec;
  spec.momentum = 0.9;
  spec.weight_decay = 0.1;
  Sgd sgd(1, spec);
  float w = 1.f;
  const float g = 0.5f;
  sgd.step(&w, &g, 1, 0.1f);  // g' = 0.5 + 0.1·1 = 0.6; v = 0.6; w = 1 − 0.06 = 0.94
  BOOST_TEST(w == 0.94f, tt::tolerance(1e-6f));
  sgd.step(&w, &g, 1, 0.1f);  // g' = 0.594; v = 0.54 + 0.594 = 1.134; w = 0.94 − 0.1134 = 0.8266
  BOOST_TEST(w == 0.8266f, tt::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(sgd_nesterov_two_steps) {
  OptimizerSpec spec;
  spec.momentum = 0.5;
  spec.nesterov = true;
  Sgd sgd(1, spec);
  float w = 2.f;
  const float g = 1.f;
  sgd.step(&w, &g, 1, 0.1f);  // v = 1; w = 2 − 0.1·(1 + 0.5·1) = 1.85
  BOOST_TEST(w == 1.85f, tt::tolerance(1e-6f));
  sgd.step(&w, &g, 1, 0.1f);  // v = 1.5; w = 1.85 − 0.1·(1 + 0.75) = 1.675
  BOOST_TEST(w == 1.675f, tt::tolerance(1e-6f));
  sgd.reset();
  sgd.step(&w, &g, 1, 0.1f);  // momentum forgotten: as the first step again
  BOOST_TEST(w == 1.525f, tt::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(adam_first_steps_move_by_lr) {
  OptimizerSpec spec;
  spec.kind = "adam";
  Adam adam(2, spec);
  float w[2] = {1.f, -1.f};
  const float g[2] = {0.3f, -4.f};
  // Bias correction makes the first update lr · g/|g| (up to epsilon), whatever |g|.
  adam.step(w, g, 2, 0.01f);
  BOOST_TEST(w[0] == 0.99f, tt::tolerance(1e-5f));
  BOOST_TEST(w[1] == -0.99f, tt::tolerance(1e-5f));
  // Second step with the same gradient: m̂ = g, v̂ = g², again lr · sign(g).
  adam.step(w, g, 2, 0.01f);
  BOOST_TEST(w[0] == 0.98f, tt::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(unknown_optimizer_is_rejected) {
  OptimizerSpec spec;
  spec.kind = "rmsprop";
  BOOST_CHECK_THROW(make_optimizer(4, spec), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(schedules) {
  ScheduleSpec warm{"constant", 0.4, 4, 1.0, 0.1};
  Schedule constant(warm, 10, 100);
  BOOST_TEST(constant.lr(0) == 0.1, tt::tolerance(1e-12));
  BOOST_TEST(constant.lr(3) == 0.4, tt::tolerance(1e-12));
  BOOST_TEST(constant.lr(50) == 0.4, tt::tolerance(1e-12));

  Schedule step({"step", 1.0, 0, 2.0, 0.5}, 10, 100);
  BOOST_TEST(step.lr(19) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(step.lr(20) == 0.5, tt::tolerance(1e-12));
  BOOST_TEST(step.lr(45) == 0.25, tt::tolerance(1e-12));
  BOOST_TEST(step.is_drop(20));
  BOOST_TEST(!step.is_drop(21));
  BOOST_TEST(!step.is_drop(0));  // no step before it

  // A decay boundary inside warm-up is no drop; the first step after it is, when the rate
  // decayed meanwhile (warm-up's peak 1.0, then 0.25).
  Schedule warm_step({"step", 1.0, 20, 1.0, 0.5}, 10, 100);
  BOOST_TEST(!warm_step.is_drop(10));
  BOOST_TEST(!warm_step.is_drop(19));
  BOOST_TEST(warm_step.is_drop(20));
  BOOST_TEST(!warm_step.is_drop(21));
  BOOST_TEST(warm_step.is_drop(30));

  Schedule cosine({"cosine", 1.0, 0, 1.0, 0.1}, 10, 100);
  BOOST_TEST(cosine.lr(0) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(cosine.lr(50) == 0.5, tt::tolerance(1e-12));
  BOOST_TEST(cosine.lr(100) == 0.0, tt::tolerance(1e-12));
  BOOST_CHECK_THROW(Schedule({"linear", 1.0, 0, 1.0, 0.1}, 10, 100), std::invalid_argument);
}
