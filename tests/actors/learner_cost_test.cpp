// A fixed learner count slower than one learner: the judgement from injected timings (no
// clock), the note it logs, and the timing's shape on a small node (never its values).
#define BOOST_TEST_MODULE actors_learner_cost
#include <boost/test/unit_test.hpp>

#include "actors/learner_cost.h"
#include "small_node.h"

using namespace starling;
using namespace starling::actors;

// One learner steps in 1 ms; two step concurrently in 1.2 ms and then average for 1.3 ms:
// 2 · 1 / 2.5 = 0.8 of one learner's samples/s, and the note says so with the costs.
BOOST_AUTO_TEST_CASE(an_exact_round_that_costs_more_than_the_second_learner_gives) {
  const LearnerTimings t{{1.0e-3, 1.0e-3, 1.1e-3}, {1.2e-3, 1.2e-3, 1.3e-3}, {1.3e-3, 1.3e-3, 1.2e-3}};
  const LearnerCost cost = judge_learners(2, IntraSync::sma, 1, t);
  BOOST_TEST(cost.speedup == 0.8, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(cost.note ==
             "2 learners measured at 0.80x the samples/s of one learner here (one: 1.00 ms a step; 2: 1.20 ms a step "
             "and a 1.30 ms SMA round every 1 step(s)); node.learners = \"auto\" tunes the count and the SMA period");
}

// The same timings with a round every 4 steps: 2 / (1.2 + 1.3 / 4) = 1.31, no warning;
// independent replicas pay no round at all.
BOOST_AUTO_TEST_CASE(fewer_rounds_divide_their_cost) {
  const LearnerTimings t{{1.0e-3}, {1.2e-3}, {1.3e-3}};
  const LearnerCost every4 = judge_learners(2, IntraSync::sma, 4, t);
  BOOST_TEST(every4.speedup == 2.0 / 1.525, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(every4.note.empty());
  BOOST_TEST(judge_learners(2, IntraSync::none, 1, t).speedup == 2.0 / 1.2, boost::test_tools::tolerance(1e-9));
}

// A round preempted as a whole does not decide: medians.
BOOST_AUTO_TEST_CASE(one_slow_round_does_not_decide) {
  const LearnerTimings t{{1.0e-3, 1.0e-3, 1.0e-3}, {1.0e-3, 9.0e-3, 1.0e-3}, {0.2e-3, 0.2e-3, 5.0e-3}};
  const LearnerCost cost = judge_learners(2, IntraSync::sma, 1, t);
  BOOST_TEST(cost.speedup == 2.0 / 1.2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(cost.note.empty());
}

BOOST_AUTO_TEST_CASE(only_fixed_counts_on_threads_of_their_own_are_timed) {
  BOOST_TEST(worth_timing(testing::small_spec(IntraSync::sma, 2)));
  BOOST_TEST(worth_timing(testing::small_spec(IntraSync::none, 3)));
  BOOST_TEST(!worth_timing(testing::small_spec(IntraSync::sma, 1)));
  BOOST_TEST(!worth_timing(testing::small_spec(IntraSync::sma, 0)));  // auto-tuned: measured while training
  BOOST_TEST(!worth_timing(testing::small_spec(IntraSync::average, 2)));
  NodeSpec scheduled = testing::small_spec(IntraSync::sma, 2);
  scheduled.detached_learners = false;
  BOOST_TEST(!worth_timing(scheduled));
}

// Real timing of a small node: whole rounds of iterations, every time positive.
BOOST_AUTO_TEST_CASE(a_small_node_is_timed_in_whole_rounds) {
  const LearnerTimings t = time_learners(testing::small_spec(IntraSync::sma, 2), testing::task());
  BOOST_TEST(!t.one_step.empty());
  BOOST_TEST(t.one_step.size() == t.group_step.size());
  BOOST_TEST(t.group_step.size() == t.group_round.size());
  for (double s : t.group_round) BOOST_TEST(s > 0.0);
}
