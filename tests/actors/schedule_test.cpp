// The node's schedule by itself, no actors: the sequence of orders and what follows each
// over whole runs (SMA rounds, exchanges, evaluations, checkpoints, learning-rate drops, the
// end), with periods of one, an evaluation only at the end and fractional epochs; a restored
// schedule continues as the uninterrupted one; a repositioned one completes its order where
// the job is.
#define BOOST_TEST_MODULE actors_schedule
#include <boost/test/unit_test.hpp>

#include "actors/node_schedule.h"

#include <string>
#include <vector>

using namespace starling;
using namespace starling::actors;

namespace {

using Orders = std::vector<std::string>;
const auto each = boost::test_tools::per_element();

// 100 samples an epoch, 2 learners of batch 10: 5 iterations an epoch, 2 epochs.
NodeSpec spec_of(IntraSync mode) {
  NodeSpec spec;
  spec.train.epochs = 2;
  spec.train.eval_every = 0.5;
  spec.train.learner.batch = 10;
  spec.intra_sync = mode;
  spec.detached_learners = false;
  return spec;
}

NodeSchedule schedule_of(const NodeSpec& spec, int learners = 2) {
  NodeSchedule s(spec, 100);
  s.set_learners(learners);
  return s;
}

std::string describe(const OrderPlan& p) {
  const char* sma[] = {"", " sma-by-node", " sma-among-learners"};
  const char* then[] = {" overlap", " strict", " rest"};
  std::string out = std::to_string(p.step) + "+" + std::to_string(p.steps);
  if (p.lr_drop) out += " drop";
  out += sma[static_cast<int>(p.sma)];
  if (p.exchange) out += then[static_cast<int>(*p.exchange)];
  if (p.evaluate) out += " evaluate";
  if (p.checkpoint) out += " checkpoint";
  if (p.last) out += " last";
  return out;
}

// Plans and completes orders as the node does, until the last or `orders` of them; a mix is
// in flight after an overlapped exchange point until the next exchange point.
Orders trace(NodeSchedule& s, int orders = 1000, bool tuning = false) {
  Orders out;
  bool in_flight = false;
  for (int i = 0; i < orders; ++i) {
    const OrderPlan& p = s.plan(tuning, in_flight);
    out.push_back(describe(p));
    if (p.exchange) in_flight = *p.exchange == Then::overlap;
    s.complete_order();
    if (p.evaluate) s.evaluated();
    if (p.last) break;
  }
  return out;
}

}  // namespace

// Evaluations every 50 samples, SMA rounds every 2 iterations, an exchange every 3, a
// checkpoint every 4 and after the last, the rate dropping after each epoch (5 iterations): every order runs
// to the next of them.
BOOST_AUTO_TEST_CASE(a_run_in_order) {
  NodeSpec spec = spec_of(IntraSync::sma);
  spec.sync_every = 2;
  spec.exchange.mode = gossip::ExchangeMode::local_sgd;
  spec.period = 3;
  spec.checkpoint_every = 4;
  spec.train.schedule = {"step", 0.1, 0, 1.0, 0.5};
  NodeSchedule s = schedule_of(spec);
  const Orders expected = {
      "0+2 sma-by-node",
      "2+1 overlap evaluate",
      "3+1 sma-by-node rest checkpoint",  // the mix in flight lands before the checkpoint
      "4+1 evaluate",
      "5+1 drop sma-by-node overlap",
      "6+2 sma-by-node rest evaluate checkpoint",
      "8+1 overlap",
      "9+1 sma-by-node strict evaluate checkpoint last",
  };
  BOOST_TEST(trace(s) == expected, each);
  BOOST_TEST(s.iteration() == 10);
  BOOST_TEST(s.samples() == 200);
}

// With overlap_steps, a mix in flight lands that many iterations past its exchange point,
// where an order ends; with none in flight nothing ends there.
BOOST_AUTO_TEST_CASE(an_overlapped_mix_lands_overlap_steps_past_its_point) {
  NodeSpec spec = spec_of(IntraSync::none);
  spec.train.eval_every = 10;
  spec.exchange.mode = gossip::ExchangeMode::local_sgd;
  spec.period = 4;
  spec.overlap = true;
  spec.overlap_steps = 1;
  NodeSchedule s = schedule_of(spec);
  const Orders expected = {"0+4 overlap", "4+1 rest", "5+3 overlap", "8+1 rest", "9+1 strict evaluate last"};
  BOOST_TEST(trace(s) == expected, each);
  spec.overlap = false;  // the steps count only with the overlap
  NodeSchedule strict = schedule_of(spec);
  BOOST_TEST(trace(strict) == Orders({"0+4 overlap", "4+4 overlap", "8+2 strict evaluate last"}), each);
}

// Schedule::is_drop decides: the first step after warm-up is a drop when the rate decayed
// during warm-up, and starts an order of its own like every drop.
BOOST_AUTO_TEST_CASE(a_drop_at_the_end_of_warm_up) {
  NodeSpec spec = spec_of(IntraSync::none);
  spec.train.eval_every = 10;
  spec.train.epochs = 10;  // 50 iterations, 5 an epoch
  spec.train.schedule = {"step", 1.0, 7, 1.0, 0.5};
  NodeSchedule s = schedule_of(spec);
  const auto orders = trace(s);
  BOOST_TEST(orders.at(0) == "0+7");
  BOOST_TEST(orders.at(1) == "7+3 drop");
  BOOST_TEST(orders.at(2) == "10+5 drop");
}

BOOST_AUTO_TEST_CASE(the_learning_rates_of_an_order) {
  NodeSpec spec = spec_of(IntraSync::none);
  spec.train.schedule = {"constant", 0.4, 4, 1.0, 0.1};
  NodeSchedule s = schedule_of(spec);
  s.plan(false, false);
  BOOST_TEST(s.learning_rates() == std::vector<float>({0.1f, 0.2f, 0.3f}), each);
  BOOST_TEST(s.lr() == 0.3, boost::test_tools::tolerance(1e-12));
}

// Every period one: each order is one iteration with an SMA round and an exchange after it.
BOOST_AUTO_TEST_CASE(periods_of_one) {
  NodeSpec spec = spec_of(IntraSync::sma);
  spec.exchange.mode = gossip::ExchangeMode::allreduce;
  spec.checkpoint_every = 1;
  spec.train.epochs = 0.2;  // 20 samples: one iteration
  NodeSchedule one = schedule_of(spec);
  BOOST_TEST(trace(one) == Orders({"0+1 sma-by-node strict evaluate checkpoint last"}), each);

  spec.train.epochs = 0.6;
  spec.checkpoint_every = 2;  // the exchange at a checkpoint is strict
  NodeSchedule three = schedule_of(spec);
  const Orders expected = {"0+1 sma-by-node overlap", "1+1 sma-by-node strict checkpoint",
                                             "2+1 sma-by-node strict evaluate checkpoint last"};
  BOOST_TEST(trace(three) == expected, each);
}

// An evaluation interval past the end: one evaluation, with the last order. A fractional
// epoch ends with the first iteration that reaches it.
BOOST_AUTO_TEST_CASE(evaluation_at_the_end_and_fractional_epochs) {
  NodeSpec spec = spec_of(IntraSync::none);
  spec.train.eval_every = 5;
  spec.train.epochs = 0.35;  // 35 samples: 2 iterations of 20
  NodeSchedule s = schedule_of(spec);
  BOOST_TEST(trace(s) == Orders({"0+2 evaluate last"}), each);
  BOOST_TEST(s.samples() == 40);
  BOOST_TEST(s.target_samples() == 35);
}

// Independent replicas run to the next event, at most kMaxOrderSteps iterations; learners
// that average among themselves are not stopped by their rounds.
BOOST_AUTO_TEST_CASE(long_orders) {
  NodeSpec spec = spec_of(IntraSync::none);
  spec.train.epochs = 100;
  spec.train.eval_every = 20;  // 2000 samples: 100 iterations
  NodeSchedule none = schedule_of(spec);
  BOOST_TEST(trace(none, 3) == Orders({"0+64", "64+36 evaluate", "100+64"}), each);

  spec.intra_sync = IntraSync::sma;
  spec.sync_every = 3;
  spec.detached_learners = true;
  NodeSchedule among = schedule_of(spec);
  BOOST_TEST(trace(among, 1) == Orders({"0+64 sma-among-learners"}), each);
}

// Synchronous SGD orders one iteration at a time, a node whose learners are being tuned
// kTuningOrderSteps; SMA of a single learner is no averaging at all.
BOOST_AUTO_TEST_CASE(one_iteration_orders_and_a_single_replica) {
  NodeSchedule average = schedule_of(spec_of(IntraSync::average));
  BOOST_TEST(trace(average, 2) == Orders({"0+1", "1+1"}), each);
  BOOST_TEST(intra_sync_name(average.current().mode) == std::string("average"));

  NodeSpec long_run = spec_of(IntraSync::none);
  long_run.train.epochs = 40, long_run.train.eval_every = 20;  // 200 iterations, an evaluation at 100
  NodeSchedule tuning = schedule_of(long_run);
  BOOST_TEST(trace(tuning, 2, true) == Orders({"0+8", "8+8"}), each);

  NodeSchedule single = schedule_of(spec_of(IntraSync::sma), 1);
  BOOST_TEST(intra_sync_name(single.plan(false, false).mode) == std::string("none"));
  BOOST_TEST(single.samples_per_iteration() == 10);
}

// A learner added mid-run: iterations get longer, the schedule's step counts them in the
// new size, and an epoch is still 100 samples.
BOOST_AUTO_TEST_CASE(a_learner_added) {
  NodeSpec spec = spec_of(IntraSync::none);
  spec.train.schedule = {"step", 1.0, 0, 1.0, 0.5};
  NodeSchedule s = schedule_of(spec, 1);
  trace(s, 1);  // 5 iterations of 10: the evaluation at 50 samples
  BOOST_TEST(s.samples() == 50);
  s.set_learners(2);
  BOOST_TEST(s.step() == 2);
  BOOST_TEST(s.iterations_left() == 8);  // 150 samples to go, 20 an iteration
  BOOST_TEST(trace(s, 2) == Orders({"2+3 evaluate", "5+2 drop evaluate"}), each);
}

// Counters taken at any point between orders and put into a fresh schedule continue the
// same sequence.
BOOST_AUTO_TEST_CASE(a_restored_schedule_continues) {
  NodeSpec spec = spec_of(IntraSync::sma);
  spec.sync_every = 2;
  spec.checkpoint_every = 3;
  spec.train.schedule = {"step", 0.1, 2, 0.7, 0.5};
  NodeSchedule straight = schedule_of(spec);
  const auto all = trace(straight);
  for (std::size_t cut = 1; cut < all.size(); ++cut) {
    NodeSchedule first = schedule_of(spec);
    trace(first, static_cast<int>(cut));
    NodeSchedule resumed = schedule_of(spec);
    resumed.restore(first.counters());
    BOOST_TEST(resumed.lr() == first.lr());
    Orders whole = all;
    whole.erase(whole.begin(), whole.begin() + static_cast<long>(cut));
    BOOST_TEST(trace(resumed) == whole, each);
  }
}

// Moved to the job's iteration 7 while finishing an order: the order completes there, with
// no evaluation until the next point after it; then orders go on from 7. Moved to the end,
// the order is the last.
BOOST_AUTO_TEST_CASE(a_repositioned_schedule_goes_on_from_the_job) {
  NodeSpec spec = spec_of(IntraSync::none);
  spec.checkpoint_every = 7;
  NodeSchedule s = schedule_of(spec);
  BOOST_TEST(describe(s.plan(false, false)) == "0+3 evaluate");
  s.reposition(7);
  BOOST_TEST(describe(s.current()) == "0+3 checkpoint");  // iteration 7 is a checkpoint's
  s.complete_order();
  s.complete_order();  // counted once
  BOOST_TEST(s.iteration() == 7);
  BOOST_TEST(s.samples() == 140);
  BOOST_TEST(trace(s) == Orders({"7+1 evaluate", "8+2 evaluate checkpoint last"}), each);

  NodeSchedule late = schedule_of(spec);
  late.plan(false, false);
  late.reposition(10);
  BOOST_TEST(describe(late.current()) == "0+3 evaluate checkpoint last");

  NodeSchedule joining = schedule_of(spec);  // before any order
  joining.reposition(4);
  BOOST_TEST(joining.iteration() == 4);
  BOOST_TEST(describe(joining.plan(false, false)) == "4+1 evaluate");
  joining.complete_order();
  joining.reposition(2);  // between orders
  BOOST_TEST(joining.iteration() == 2);
  BOOST_TEST(joining.samples() == 40);
}
