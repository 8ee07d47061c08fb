// Checkpoints of a node: with a fixed seed, training N iterations straight gives the same
// model as training to iteration k, checkpointing, and resuming to N (one learner; two SMA
// learners with central momentum; synchronous SGD); writing checkpoints does not change the
// run; resuming with no checkpoint starts afresh; another run's checkpoint is refused.
#define BOOST_TEST_MODULE actors_checkpoint
#include <boost/test/unit_test.hpp>

#include "actors/node.h"
#include "learners/checkpoints/checkpoint.h"

#include "tests/actors/small_node.h"
#include "tests/temp_dir.h"

#include <filesystem>

using namespace starling;
using namespace starling::actors;
namespace fs = std::filesystem;

using starling::testing::TempDir;

namespace {

// Every piece of state in play: momentum, a step-dependent learning rate, evaluations
// between checkpoints, and for several learners the central model's momentum (z_prev).
NodeSpec resumable_spec(IntraSync mode, int learners) {
  NodeSpec spec = starling::actors::testing::small_spec(mode, learners);
  spec.train.learner.optimizer.nesterov = true;
  spec.train.schedule.kind = "cosine";
  spec.train.schedule.warmup_steps = 5;
  spec.train.eval_every = 0.5;
  spec.momentum = learners > 1 ? 0.5 : 0.0;
  return spec;
}

using starling::actors::testing::run;

// Straight vs. checkpointed every `every` and resumed from iteration `from`.
void check_resume_is_exact(NodeSpec spec, int64_t every, int64_t from) {
  TempDir dir("node-checkpoint");
  const NodeResult straight = run(spec);

  spec.checkpoint_dir = dir.str();
  spec.checkpoint_every = every;
  spec.checkpoint_keep = 1000;
  const NodeResult with_checkpoints = run(spec);
  BOOST_TEST(with_checkpoints.train.model_checksum == straight.train.model_checksum);  // writing changes nothing

  // As if the run had been killed right after the checkpoint at `from`.
  for (const auto& path : list_checkpoints(spec.checkpoint_dir))
    if (fs::path(path).filename().string() != checkpoint_file_name(static_cast<uint64_t>(from))) fs::remove(path);
  BOOST_REQUIRE(list_checkpoints(spec.checkpoint_dir).size() == 1u);
  spec.resume = true;
  spec.checkpoint_every = 0;
  const NodeResult resumed = run(spec);
  BOOST_TEST(resumed.resumed_from_step == from);
  BOOST_TEST(fs::path(resumed.resumed_from).filename().string() == checkpoint_file_name(static_cast<uint64_t>(from)));
  BOOST_TEST(resumed.train.model_checksum == straight.train.model_checksum);
  BOOST_TEST(resumed.train.steps == straight.train.steps);
  BOOST_TEST(resumed.train.samples == straight.train.samples);
  BOOST_REQUIRE(resumed.train.history.size() == straight.train.history.size());
  for (std::size_t i = 0; i < straight.train.history.size(); ++i) {
    BOOST_TEST(resumed.train.history[i].step == straight.train.history[i].step);
    BOOST_TEST(resumed.train.history[i].test_accuracy == straight.train.history[i].test_accuracy);
    // The loss is a mean over steps: the same however checkpoints cut the orders (up to rounding).
    BOOST_TEST(resumed.train.history[i].train_loss == straight.train.history[i].train_loss,
               boost::test_tools::tolerance(1e-9));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_learner_resumes_exactly) {
  check_resume_is_exact(resumable_spec(IntraSync::sma, 1), 20, 60);  // 100 iterations; evaluations at 25, 50, 75
}

BOOST_AUTO_TEST_CASE(one_adam_learner_resumes_exactly) {
  NodeSpec spec = resumable_spec(IntraSync::sma, 1);
  spec.train.learner.optimizer.kind = "adam";
  spec.train.schedule.lr = 0.002;
  check_resume_is_exact(spec, 15, 45);
}

BOOST_AUTO_TEST_CASE(two_sma_learners_resume_exactly) {
  NodeSpec spec = resumable_spec(IntraSync::sma, 2);
  spec.sync_every = 3;  // a checkpoint between SMA rounds: replicas off z
  check_resume_is_exact(spec, 10, 20);
}

BOOST_AUTO_TEST_CASE(synchronous_sgd_resumes_exactly) {
  check_resume_is_exact(resumable_spec(IntraSync::average, 2), 10, 30);
}

// node.learners = "auto": a checkpoint taken after the tuner settled brings back its choice
// of count and period, and its log; the resumed run does not tune again.
BOOST_AUTO_TEST_CASE(an_auto_tuned_node_resumes_with_its_choice) {
  TempDir dir("node-checkpoint-auto");
  NodeSpec spec = resumable_spec(IntraSync::sma, 0);
  spec.max_learners = 2;
  spec.autotune_window_seconds = 0.0;  // a decision every order of 20 iterations or more: 5 trials
  spec.train.epochs = 10;              // at most about 4 epochs of trials
  spec.checkpoint_dir = dir.str();
  spec.checkpoint_every = 10;
  const NodeResult tuned = run(spec);
  BOOST_REQUIRE(tuned.autotune_log.back().rfind("settling on", 0) == 0u);
  spec.resume = true;
  spec.checkpoint_every = 0;
  const NodeResult resumed = run(spec);
  BOOST_TEST(resumed.resumed_from_step > 0);
  BOOST_TEST(resumed.learners == tuned.learners);
  BOOST_TEST(intra_sync_name(resumed.intra_sync) == intra_sync_name(tuned.intra_sync));
  BOOST_TEST(resumed.sync_every == tuned.sync_every);
  BOOST_TEST(resumed.autotune_log == tuned.autotune_log, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(resume_without_a_checkpoint_starts_afresh) {
  TempDir dir("node-checkpoint");
  NodeSpec spec = resumable_spec(IntraSync::sma, 1);
  spec.train.epochs = 0.5;
  const NodeResult straight = run(spec);
  spec.checkpoint_dir = dir.str();
  spec.resume = true;
  const NodeResult fresh = run(spec);
  BOOST_TEST(fresh.resumed_from.empty());
  BOOST_TEST(fresh.train.model_checksum == straight.train.model_checksum);
}

BOOST_AUTO_TEST_CASE(another_runs_checkpoint_is_refused) {
  TempDir dir("node-checkpoint");
  NodeSpec spec = resumable_spec(IntraSync::sma, 2);
  spec.train.epochs = 0.5;
  spec.checkpoint_dir = dir.str();
  spec.checkpoint_every = 5;
  run(spec);
  spec.resume = true;
  spec.learners = 3;
  try {
    run(spec);
    BOOST_FAIL("a checkpoint of two learners must not resume three");
  } catch (const CheckpointMismatch& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("learners: 2 in the checkpoint, 3 here") != std::string::npos, what);
  }
  spec.learners = 2;
  spec.train.learner.model.hidden = {16};
  BOOST_CHECK_THROW(run(spec), CheckpointMismatch);
}
