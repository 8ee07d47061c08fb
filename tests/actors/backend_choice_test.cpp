// kernels.backend = "auto": the choice from injected step times (faster median wins, a tie
// goes to native, one preempted round does not decide it, the note says by how much), and a
// node run with the choice trains on a backend this build has and reports which. Nothing here
// asserts on a clock.
#define BOOST_TEST_MODULE actors_backend_choice
#include <boost/test/unit_test.hpp>

#include "actors/backend_choice.h"
#include "small_node.h"

using namespace starling;
using namespace starling::actors;

BOOST_AUTO_TEST_CASE(the_faster_median_wins_and_the_note_says_by_how_much) {
  const BackendChoice native = choose_backend({2.0e-3, 2.1e-3, 2.2e-3}, {2.5e-3, 2.6e-3, 2.7e-3});
  BOOST_TEST((native.backend == kernels::Backend::native));
  BOOST_TEST(native.note == "backend auto: native 1.24x onednn (native 2.10 ms, onednn 2.60 ms a step)");
  const BackendChoice onednn = choose_backend({4.0e-3, 4.0e-3}, {2.0e-3, 2.0e-3});
  BOOST_TEST((onednn.backend == kernels::Backend::onednn));
  BOOST_TEST(onednn.note == "backend auto: onednn 2.00x native (native 4.00 ms, onednn 2.00 ms a step)");
}

BOOST_AUTO_TEST_CASE(a_tie_goes_to_native) {
  BOOST_TEST((choose_backend({1e-3}, {1e-3}).backend == kernels::Backend::native));
}

BOOST_AUTO_TEST_CASE(one_slow_round_does_not_decide) {
  // Native's second round was preempted: its mean would lose, its median wins.
  const BackendChoice c = choose_backend({1.0e-3, 9.0e-3, 1.0e-3, 1.1e-3, 1.0e-3}, {1.2e-3, 1.2e-3, 1.3e-3, 1.2e-3, 1.2e-3});
  BOOST_TEST((c.backend == kernels::Backend::native));
}

BOOST_AUTO_TEST_CASE(a_node_with_auto_trains_on_a_backend_this_build_has) {
  NodeSpec spec = testing::small_spec(IntraSync::sma, 1);
  spec.choose_backend = true;
  spec.train.epochs = 1;
  const BackendChoice timed = time_and_choose_backend(spec.train.learner, testing::task());
  BOOST_TEST(kernels::backend_available(timed.backend));
  BOOST_TEST(timed.note.rfind("backend auto: ", 0) == 0);
  const NodeResult r = testing::run(spec);
  BOOST_TEST(kernels::backend_available(r.backend));
  BOOST_TEST(r.train.last().test_accuracy > 0.5);
}
