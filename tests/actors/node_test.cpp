// The node and its learner actors: one learner follows the plain single-learner path
// exactly; several learners train and are reproducible; a failing learner surfaces as an
// error naming it; auto-tuning reaches a decision; node.slowdown stretches each order. The
// node/learner protocol also runs under CAF's deterministic test scheduler.
#define BOOST_TEST_MODULE actors_node
#include <boost/test/unit_test.hpp>

#include "actors/learner_actor.h"
#include "actors/metrics_actor.h"
#include "actors/learner_tuner.h"
#include "actors/node.h"
#include "actors/node_actor.h"
#include "tests/actors/small_node.h"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace starling;
using namespace starling::actors;
using namespace starling::actors::testing;

BOOST_AUTO_TEST_CASE(one_learner_follows_the_plain_path) {
  TrainObserver quiet;
  for (IntraSync mode : {IntraSync::sma, IntraSync::average, IntraSync::none}) {
    const NodeSpec spec = small_spec(mode, 1);
    const TrainResult plain = train(spec.train, data().train, data().test, quiet);
    const NodeResult node = run(spec);
    BOOST_TEST_CONTEXT(intra_sync_name(mode)) {
      BOOST_TEST(node.train.model_checksum == plain.model_checksum);
      BOOST_TEST(node.train.samples == plain.samples);
      BOOST_TEST(node.train.last().test_accuracy == plain.last().test_accuracy);
    }
  }
}

BOOST_AUTO_TEST_CASE(several_learners_train_and_are_reproducible) {
  for (IntraSync mode : {IntraSync::sma, IntraSync::average, IntraSync::none}) {
    NodeSpec spec = small_spec(mode, 3);
    spec.train.learner.batch = 8;
    const NodeResult a = run(spec);
    const NodeResult b = run(spec);
    BOOST_TEST_CONTEXT(intra_sync_name(mode)) {
      BOOST_TEST(a.learners == 3);
      BOOST_TEST(a.train.model_checksum == b.train.model_checksum);
      BOOST_TEST(a.train.last().test_accuracy > 0.9);
      BOOST_TEST(a.compute_seconds > 0.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(uneven_learners_are_named_with_their_cost) {
  BOOST_TEST(uneven_learners_note(3, 2, IntraSync::sma) ==
             "3 learners on 2 cores: each round waits for the cores that run 2 of them, so expect about 0.75x the "
             "samples/s of 2 learners; a multiple of 2 keeps every core busy");
  BOOST_TEST(uneven_learners_note(5, 4, IntraSync::average).find("about 0.62x the samples/s of 4 learners") !=
             std::string::npos);
  for (int learners : {1, 2, 4, 8}) BOOST_TEST(uneven_learners_note(learners, 2, IntraSync::sma).empty());
  BOOST_TEST(uneven_learners_note(3, 2, IntraSync::none).empty());  // independent replicas never wait
  BOOST_TEST(uneven_learners_note(0, 2, IntraSync::sma).empty());   // auto-tuned
}

// With learners on threads of their own the SMA rounds run among the learners, inside the
// node's orders; on the scheduler the node runs them: the same arithmetic, the same bits.
BOOST_AUTO_TEST_CASE(learners_own_sma_rounds_match_the_nodes) {
  for (int sync_every : {1, 3}) {
    NodeSpec spec = small_spec(IntraSync::sma, 3);
    spec.train.learner.batch = 8;
    spec.sync_every = sync_every;
    spec.momentum = 0.5;
    const NodeResult own = run(spec);
    spec.detached_learners = false;
    const NodeResult nodes = run(spec);
    BOOST_TEST_CONTEXT("sync_every " << sync_every) {
      BOOST_TEST(own.train.model_checksum == nodes.train.model_checksum);
      BOOST_TEST(own.train.last().test_accuracy == nodes.train.last().test_accuracy);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_failing_learner_is_reported_by_name) {
  NodeSpec spec = small_spec(IntraSync::sma, 2);
  spec.train.schedule.lr = 1e30;  // the loss overflows within a few steps
  try {
    run(spec);
    BOOST_FAIL("a diverging learner must fail the run");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("learner") != std::string::npos, what);
    BOOST_TEST(what.find("not finite") != std::string::npos, what);
  }
}

BOOST_AUTO_TEST_CASE(autotune_reaches_a_decision) {
  NodeSpec spec = small_spec(IntraSync::sma, 0);
  spec.max_learners = 3;
  spec.autotune_window_seconds = 0.0;  // decide after every 20 iterations
  spec.train.epochs = 6;
  const NodeResult r = run(spec);
  // The count phase (one learner, at least one added), the period phase's first trial, the choice.
  BOOST_TEST(r.autotune_log.size() >= 4u);
  BOOST_TEST(r.learners >= 1);
  BOOST_TEST(r.learners <= 3);
  BOOST_TEST(r.train.last().test_accuracy > 0.8);
  // The node trains on what the last line chose.
  const std::string& choice = r.autotune_log.back();
  BOOST_TEST(choice.rfind("settling on " + describe({r.learners, r.intra_sync, r.sync_every}) + ":", 0) == 0u, choice);
  bool periods_tried = false;
  for (const auto& line : r.autotune_log) periods_tried |= line.find("independent give") != std::string::npos;
  BOOST_TEST(periods_tried);
}

// Under CAF's deterministic scheduler every message is delivered by hand: one `run` request
// must drive a whole training to a NodeResult without any real concurrency.
BOOST_AUTO_TEST_CASE(node_protocol_under_the_deterministic_scheduler) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system system{cfg};
  auto& scheduler = dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler());
  TrainObserver quiet;
  NodeSpec spec = small_spec(IntraSync::sma, 2);
  spec.train.epochs = 1;
  spec.detached_learners = false;  // every actor under the test coordinator
  auto metrics = system.spawn(metrics_actor, &quiet, std::function<void(const NodeSnapshot&)>{});
  auto node = system.spawn(node_actor, spec, task(), metrics, nullptr, std::string());
  caf::scoped_actor self{system};
  self->send(node, run_atom::value);
  const std::size_t delivered = scheduler.run(1000000);
  const int64_t iterations = data().train.size() / (2 * spec.train.learner.batch);
  BOOST_TEST(delivered >= static_cast<std::size_t>(iterations * 3));  // orders, reports, next
  bool answered = false;
  self->receive([&](const NodeResult& r) {
    answered = true;
    BOOST_TEST(r.learners == 2);
    BOOST_TEST(r.train.history.size() == 1u);
    BOOST_TEST(r.train.samples >= static_cast<int64_t>(data().train.size()));
  }, caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(answered);
}

// The learner's side of an iteration, without CAF: a learning-rate drop (load + reset)
// puts the replica exactly on z before its step; an SMA iteration reports the replica itself.
BOOST_AUTO_TEST_CASE(learner_step_orders) {
  const NodeSpec spec = small_spec(IntraSync::sma, 1);
  LearnerState state;
  state.learner = std::make_unique<Learner>(spec.train.learner, task());
  const std::size_t n = state.learner->model().param_count();
  std::vector<float> z(n, 0.01f);

  StepOrder order;
  order.lrs = {0.f};  // no gradient step: only the load acts
  order.load = true;
  order.reset_optimizer = true;
  order.z = z.data();
  StepReport report = run_step(state, order);
  const float* w = state.learner->model().params();
  BOOST_TEST(std::equal(w, w + n, z.begin()));
  BOOST_TEST(report.vector == w);
  BOOST_TEST(std::isfinite(report.loss));

  order.sync = false;  // between SMA rounds there is nothing to report
  BOOST_TEST(run_step(state, order).vector == nullptr);
  order.mode = IntraSync::average;  // synchronous SGD reports the gradient
  BOOST_TEST(run_step(state, order).vector == state.learner->model().grads());
}

// node.slowdown: an order takes `slowdown` times its compute, and the learner reports all
// of it as compute. The bound is one-sided (sleeps never end early) against the fastest of
// five plain orders of the same work, so other load on the host cannot fail it; the
// arithmetic is untouched, so the node trains the same model.
BOOST_AUTO_TEST_CASE(slowdown_stretches_each_order_and_counts_it_as_compute) {
  using Clock = std::chrono::steady_clock;
  const NodeSpec spec = small_spec(IntraSync::sma, 1);
  LearnerState plain, slow;
  plain.learner = std::make_unique<Learner>(spec.train.learner, task());
  slow.learner = std::make_unique<Learner>(spec.train.learner, task());
  slow.slowdown = 4.0;
  StepOrder order;
  order.lrs = std::vector<float>(20, 0.02f);
  double fastest = 1e9;
  for (int k = 0; k < 5; ++k) {
    const auto start = Clock::now();
    run_step(plain, order);
    fastest = std::min(fastest, std::chrono::duration<double>(Clock::now() - start).count());
  }
  for (int k = 0; k < 5; ++k) {
    const auto start = Clock::now();
    const StepReport report = run_step(slow, order);
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    BOOST_TEST(wall >= 3.0 * fastest, wall << " s against the plain order's " << fastest << " s");
    BOOST_TEST(report.compute_seconds <= wall);
    BOOST_TEST(report.compute_seconds >= 0.9 * wall);
  }
  const std::size_t n = plain.learner->model().param_count();
  const float* a = plain.learner->model().params();
  BOOST_TEST(std::equal(a, a + n, slow.learner->model().params()));

  NodeSpec slowed = spec;
  slowed.slowdown = 3.0;
  BOOST_TEST(run(slowed).train.model_checksum == run(spec).train.model_checksum);
}
