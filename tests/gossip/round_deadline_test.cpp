// Learned round deadlines (gossip/control/round_deadline.h) against their rule.
#define BOOST_TEST_MODULE gossip_round_deadline
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "gossip/control/round_deadline.h"

using namespace starling::gossip;
using namespace std::chrono_literals;

namespace {
RoundDeadline deadline() { return RoundDeadline(RoundDeadlineOptions{2000ms, 60000ms, 4.0, 3}); }
}  // namespace

BOOST_AUTO_TEST_CASE(before_any_round_the_initial_deadline_holds) { BOOST_TEST(deadline().current().count() == 60000); }

BOOST_AUTO_TEST_CASE(fast_rounds_are_held_to_the_floor) {
  RoundDeadline d = deadline();
  d.completed(0.01s);
  BOOST_TEST(d.current().count() == 2000);
}

BOOST_AUTO_TEST_CASE(the_deadline_follows_the_slowest_recent_round) {
  RoundDeadline d = deadline();
  d.completed(1.0s);
  d.completed(3.0s);
  d.completed(2.0s);
  BOOST_TEST(d.current().count() == 12000);  // 4 × 3 s
  d.completed(1.0s);  // the window of 3 still holds the 3 s round
  BOOST_TEST(d.current().count() == 12000);
  d.completed(1.0s);  // now 2, 1, 1
  BOOST_TEST(d.current().count() == 8000);
  d.completed(1.0s);
  BOOST_TEST(d.current().count() == 4000);
}

BOOST_AUTO_TEST_CASE(rounds_cut_short_double_it_until_one_completes) {
  RoundDeadline d = deadline();
  d.completed(1.0s);
  d.cut_short();
  BOOST_TEST(d.current().count() == 8000);
  d.cut_short();
  BOOST_TEST(d.current().count() == 16000);
  d.completed(10.0s);  // the slow round got through: it now sets the deadline
  BOOST_TEST(d.current().count() == 40000);
}

BOOST_AUTO_TEST_CASE(a_slow_first_round_gets_through_on_a_retry) {
  RoundDeadline d = deadline();
  d.cut_short();
  BOOST_TEST(d.current().count() == 120000);
  for (int i = 0; i < 100; ++i) d.cut_short();  // bounded, never wraps
  BOOST_TEST(d.current().count() > 0);
}
