// Lockstep (learners/lockstep.h): every party runs every call, on threads of their own, the
// caller's task included; a task's exception comes back from run() once all have returned,
// and the object goes on working and stops cleanly afterwards.
#define BOOST_TEST_MODULE learners_lockstep
#include <boost/test/unit_test.hpp>

#include "learners/lockstep.h"

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace starling;

BOOST_AUTO_TEST_CASE(every_party_runs_every_call_on_its_own_thread) {
  Lockstep team(3);
  BOOST_TEST(team.parties() == 3);
  std::vector<int> calls(3, 0);
  std::vector<std::thread::id> threads(3);
  for (int round = 0; round < 50; ++round)
    team.run([&](int j) {
      ++calls[static_cast<std::size_t>(j)];
      threads[static_cast<std::size_t>(j)] = std::this_thread::get_id();
    });
  BOOST_TEST(calls == std::vector<int>(3, 50), boost::test_tools::per_element());
  BOOST_TEST(threads[0] == std::this_thread::get_id());
  BOOST_TEST((threads[1] != threads[0] && threads[2] != threads[0] && threads[1] != threads[2]));
}

BOOST_AUTO_TEST_CASE(a_failed_task_is_rethrown_after_all_returned) {
  Lockstep team(2);
  std::atomic<int> returned{0};
  BOOST_CHECK_THROW(team.run([&](int j) {
    ++returned;
    if (j == 1) throw std::runtime_error("learner 1 failed");
  }),
                    std::runtime_error);
  BOOST_TEST(returned.load() == 2);
  team.run([&](int) { ++returned; });  // still usable
  BOOST_TEST(returned.load() == 4);
}

BOOST_AUTO_TEST_CASE(one_party_runs_on_the_caller_alone) {
  Lockstep team(1);
  std::thread::id where;
  team.run([&](int) { where = std::this_thread::get_id(); });
  BOOST_TEST(where == std::this_thread::get_id());
  BOOST_CHECK_THROW(Lockstep(0), std::invalid_argument);
}
