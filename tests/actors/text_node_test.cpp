// A language model on the node (actors/node.h) with its learner actors, as an image model
// trains: one learner follows a plain Learner's steps bit for bit; two learners learn a
// periodic text with the same bits on every run; on identical batches one SMA round moves z
// and the replicas as the arithmetic says; rounds come every sync_every iterations; z is
// what the run validates, sums and checkpoints; a run resumed from a checkpoint ends with the
// uninterrupted run's bits; node.learners = "auto" tunes the count on text.
#define BOOST_TEST_MODULE actors_text_node
#include <boost/test/unit_test.hpp>

#include "actors/node.h"
#include "tests/learners/small_text.h"

#include <cmath>
#include <filesystem>

using namespace starling;
using namespace starling::actors;
using namespace starling::testing;

namespace {

std::vector<float> params_of(const Model& m) { return {m.params(), m.params() + m.param_count()}; }

// The largest |a_i − b_i| over the arena.
double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double most = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) most = std::max(most, std::abs(static_cast<double>(a[i]) - b[i]));
  return most;
}

// The tiny GPT at a constant rate for `batches` batches (steps / learners iterations),
// validated every `eval_batches`.
NodeSpec text_spec(int learners, int64_t batches, int64_t eval_batches = 0) {
  NodeSpec spec;
  spec.train.learner = small_gpt();
  spec.train.schedule.kind = "constant";
  spec.train.schedule.lr = 1e-2;
  spec.train.samples = batches * spec.train.learner.batch;
  spec.train.eval_samples = (eval_batches > 0 ? eval_batches : batches) * spec.train.learner.batch;
  spec.learners = learners;
  spec.threads = 2;
  return spec;
}

NodeResult run(const NodeSpec& spec, std::shared_ptr<const Task> task) {
  Quiet quiet;
  return run_node(spec, std::move(task), quiet);
}

// A part of exactly one window: every learner's every batch is that window, whatever its seed.
std::shared_ptr<const TextTask> one_window_task(const TextCorpus& corpus) {
  const TextRange first = partition_text(corpus, 1, PartitionSpec{}).front().front();
  return std::make_shared<const TextTask>(corpus, TextPart{{first.begin, first.begin + 13, first.file}}, 13);
}

// Section `name` of the newest checkpoint in `dir` as a model's parameters; a learner's
// section starts with its step count.
std::vector<float> saved(const std::string& dir, const std::string& name) {
  const Checkpoint c = read_checkpoint(list_checkpoints(dir).front());
  Model m(small_gpt().model);
  SectionReader in = c.reader(name);
  if (name != "central") in.get<int64_t>();
  in.floats(m.params(), m.param_count());
  return params_of(m);
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_learner_follows_a_plain_learner_bit_for_bit) {
  TempDir dir("text-node-one");
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = periodic_task(corpus);
  const NodeResult node = run(text_spec(1, 40, 20), task);
  Learner plain(small_gpt(), task);
  for (int s = 0; s < 40; ++s) plain.step(1e-2f);
  BOOST_TEST(node.train.model_checksum == checksum_hex(plain.model().params(), plain.model().param_count()));
  BOOST_REQUIRE(node.train.history.size() == 2u);
  BOOST_TEST(node.train.history[0].step == 20);
  BOOST_TEST(node.train.last().test_loss == task->evaluate(plain.model(), kernels::Backend::native).loss);
  BOOST_TEST(node.train.samples == 40 * 4);
}

BOOST_AUTO_TEST_CASE(two_learners_learn_a_periodic_text_and_repeat_their_bits) {
  TempDir dir("text-node-two");
  const TextCorpus corpus = periodic_corpus(dir);
  const NodeSpec spec = text_spec(2, 240);
  const NodeResult a = run(spec, periodic_task(corpus)), b = run(spec, periodic_task(corpus));
  BOOST_TEST(a.train.model_checksum == b.train.model_checksum);  // threads, yet the same bits
  BOOST_TEST(a.train.last().test_loss < 0.2);                       // from ln 256 ≈ 5.5: the period is learnt
  BOOST_TEST(a.train.samples == 240 * 4);                           // the same samples as one learner's 240 steps
  BOOST_TEST(a.train.steps == 120);                                 // in half the iterations
  BOOST_TEST(a.learners == 2);
}

// Both learners take the one-learner step Δ from x0: c_j = α Δ, w_j ← x0 + (1 − α) Δ,
// z ← x0 + 2 α Δ. α = 1 puts the replicas back at x0 and z at x0 + 2Δ; α = 1/2 (the default
// 1/learners) puts z where one learner alone would be.
BOOST_AUTO_TEST_CASE(one_round_on_identical_batches_moves_z_by_the_learners_corrections) {
  TempDir dir("text-node-round");
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = one_window_task(corpus);
  Learner alone(small_gpt(), task);
  const std::vector<float> x0 = params_of(alone.model());
  alone.step(1e-2f);
  const std::vector<float> w = params_of(alone.model());
  for (const double alpha : {1.0, 0.0}) {
    NodeSpec spec = text_spec(2, 2);
    spec.alpha = alpha;
    spec.checkpoint_dir = dir.file("alpha" + std::to_string(alpha));
    spec.checkpoint_every = 1;
    run(spec, task);
    const double a = alpha > 0 ? alpha : 0.5;
    std::vector<float> z(x0.size()), replica(x0.size());
    for (std::size_t i = 0; i < x0.size(); ++i) {
      const double delta = static_cast<double>(w[i]) - x0[i];
      z[i] = static_cast<float>(x0[i] + 2 * a * delta);
      replica[i] = static_cast<float>(x0[i] + (1 - a) * delta);
    }
    BOOST_TEST_CONTEXT("alpha " << alpha) {
      BOOST_TEST(max_difference(z, saved(spec.checkpoint_dir, "central")) < 1e-6);
      for (const char* j : {"learner.0", "learner.1"})
        BOOST_TEST(max_difference(replica, saved(spec.checkpoint_dir, j)) < 1e-6);
      if (alpha == 1.0) BOOST_TEST(max_difference(w, saved(spec.checkpoint_dir, "central")) > 1e-3);  // z overshoots w by Δ
    }
  }
}

BOOST_AUTO_TEST_CASE(rounds_come_every_sync_every_iterations) {
  TempDir dir("text-node-sync");
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = periodic_task(corpus);
  Model initial(small_gpt().model);
  initial.init(small_gpt().seed);
  NodeSpec spec = text_spec(2, 2);
  spec.sync_every = 2;
  spec.checkpoint_dir = dir.file("one");
  spec.checkpoint_every = 1;
  run(spec, task);
  BOOST_TEST(max_difference(params_of(initial), saved(spec.checkpoint_dir, "central")) == 0.0);  // no round yet
  BOOST_TEST(max_difference(saved(spec.checkpoint_dir, "learner.0"), saved(spec.checkpoint_dir, "learner.1")) > 0.0);
  spec = text_spec(2, 4);
  spec.sync_every = 2;
  spec.checkpoint_dir = dir.file("two");
  spec.checkpoint_every = 2;
  run(spec, task);
  BOOST_TEST(max_difference(params_of(initial), saved(spec.checkpoint_dir, "central")) > 0.0);
}

// The run's last validation and its checksum are z's, and the checkpoint's "central" is z,
// not a replica.
BOOST_AUTO_TEST_CASE(the_central_model_is_validated_and_checkpointed) {
  TempDir dir("text-node-central");
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = periodic_task(corpus);
  NodeSpec spec = text_spec(2, 16);
  spec.checkpoint_dir = dir.file("ckpt");
  spec.checkpoint_every = 4;
  const NodeResult result = run(spec, task);
  const std::vector<float> z = saved(spec.checkpoint_dir, "central");
  Model central(small_gpt().model);
  std::copy(z.begin(), z.end(), central.params());
  BOOST_TEST(checksum_hex(central.params(), central.param_count()) == result.train.model_checksum);
  BOOST_TEST(task->evaluate(central, kernels::Backend::native).loss == result.train.last().test_loss);
  BOOST_TEST(max_difference(z, saved(spec.checkpoint_dir, "learner.1")) > 0.0);
}

// Cut after iteration 3 of 6 (a round every second iteration, μ = 0.5): every replica, its
// moments, its position in the text, z and z_prev come back.
BOOST_AUTO_TEST_CASE(a_resumed_run_ends_with_the_uninterrupted_bits) {
  TempDir dir("text-node-resume");
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = periodic_task(corpus);
  NodeSpec spec = text_spec(2, 12, 4);
  spec.sync_every = 2;
  spec.momentum = 0.5;
  const NodeResult straight = run(spec, task);
  spec.checkpoint_dir = dir.file("ckpt");
  spec.checkpoint_every = 3;
  run(spec, task);
  for (const auto& path : list_checkpoints(spec.checkpoint_dir))
    if (path.find(checkpoint_file_name(3)) == std::string::npos) std::filesystem::remove(path);
  spec.resume = true;
  const NodeResult resumed = run(spec, task);
  BOOST_TEST(resumed.resumed_from_step == 3);
  BOOST_TEST(resumed.train.model_checksum == straight.train.model_checksum);
  BOOST_TEST(resumed.train.last().test_loss == straight.train.last().test_loss);
}

// node.learners = "auto": the tuner times one learner, then two, on text as on images.
BOOST_AUTO_TEST_CASE(auto_tuning_chooses_a_learner_count_on_text) {
  TempDir dir("text-node-auto");
  const TextCorpus corpus = periodic_corpus(dir);
  NodeSpec spec = text_spec(0, 400);
  // A window closes on its 20 iterations however fast the host: a time bound could outlast the run.
  spec.autotune_window_seconds = 1e-6;
  const NodeResult result = run(spec, periodic_task(corpus));
  BOOST_TEST(!result.autotune_log.empty());
  BOOST_TEST(result.learners >= 1);
  BOOST_TEST(result.train.samples == 400 * 4);
  BOOST_TEST(result.train.last().test_loss < 1.0);
}
