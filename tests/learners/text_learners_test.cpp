// Several SMA learners of a language model on one node (learners/text_learners.h): with two
// learners the central model learns a periodic text, with the same bits on every run; on
// identical batches one round moves z and the replicas as the SMA arithmetic says; rounds
// come every sync_every steps; and the central model is what a run validates and checkpoints.
#define BOOST_TEST_MODULE learners_text_learners
#include <boost/test/unit_test.hpp>

#include "learners/text_learners.h"
#include "learners/text_trainer.h"
#include "tests/learners/small_text.h"

#include <cmath>
#include <vector>

using namespace starling;
using namespace starling::testing;

namespace {

std::vector<float> params_of(Model& m) { return {m.params(), m.params() + m.param_count()}; }

// The largest |a_i − b_i| over the arena.
double max_difference(const std::vector<float>& a, const float* b) {
  double most = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) most = std::max(most, std::abs(static_cast<double>(a[i]) - b[i]));
  return most;
}

// A part of exactly one window: every learner's every batch is that window, whatever its seed.
TextPart one_window(const TextCorpus& corpus, int context) {
  const TextRange first = partition_text(corpus, 1, PartitionSpec{}).front().front();
  return {{first.begin, first.begin + static_cast<uint64_t>(context) + 1, first.file}};
}

TextTrainSpec two_learners(int steps) {
  TextTrainSpec spec;
  spec.learner = small_gpt();
  spec.sma.learners = 2;
  spec.schedule.lr = 1e-2;
  spec.schedule.kind = "constant";
  spec.steps = steps;
  return spec;
}

}  // namespace

BOOST_AUTO_TEST_CASE(two_learners_learn_a_periodic_text_and_repeat_their_bits) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const TextPart part = partition_text(corpus, 1, PartitionSpec{}).front();
  const TextTrainSpec spec = two_learners(120);
  Quiet quiet;
  const TrainResult a = train_text(spec, corpus, part, quiet);
  const TrainResult b = train_text(spec, corpus, part, quiet);
  BOOST_TEST(a.model_checksum == b.model_checksum);  // threads, yet the same bits
  BOOST_TEST(a.last().test_loss < 0.2);               // from ln 256 ≈ 5.5: the period is learnt
  BOOST_TEST(a.samples == 120 * 4 * 2);               // a step is one batch of each learner
}

// Both learners take the one-learner step Δ from x0: c_j = α Δ, w_j ← x0 + (1 − α) Δ,
// z ← x0 + 2 α Δ. α = 1 puts the replicas back at x0 and z at x0 + 2Δ; α = 1/2 (the default
// 1/learners) puts z where one learner alone would be.
BOOST_AUTO_TEST_CASE(one_round_on_identical_batches_moves_z_by_the_learners_corrections) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const TextLearnerSpec spec = small_gpt();
  const TextPart part = one_window(corpus, spec.model.context);
  TextLearner alone(spec, corpus, part);
  const std::vector<float> x0 = params_of(alone.model());
  alone.step(1e-2f);
  const std::vector<float> w = params_of(alone.model());
  for (const double alpha : {1.0, 0.0}) {
    TextLearners node(spec, TextSmaSpec{2, alpha, 0.0, 1}, corpus, part);
    node.step(1e-2f);
    const double a = alpha > 0 ? alpha : 0.5;
    std::vector<float> z(x0.size()), replica(x0.size());
    for (std::size_t i = 0; i < x0.size(); ++i) {
      const double delta = static_cast<double>(w[i]) - x0[i];
      z[i] = static_cast<float>(x0[i] + 2 * a * delta);
      replica[i] = static_cast<float>(x0[i] + (1 - a) * delta);
    }
    BOOST_TEST(max_difference(z, node.central().params()) < 1e-6);
    for (int j = 0; j < 2; ++j) BOOST_TEST(max_difference(replica, node.replica(j).params()) < 1e-6);
    if (alpha == 1.0) BOOST_TEST(max_difference(w, node.central().params()) > 1e-3);  // z overshoots w by Δ
  }
}

BOOST_AUTO_TEST_CASE(rounds_come_every_sync_every_steps) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const TextPart part = partition_text(corpus, 1, PartitionSpec{}).front();
  TextLearners node(small_gpt(), TextSmaSpec{2, 0.0, 0.0, 2}, corpus, part);
  const std::vector<float> x0 = params_of(node.central());
  node.step(1e-2f);
  BOOST_TEST(max_difference(x0, node.central().params()) == 0.0);  // no round yet
  BOOST_TEST(max_difference(params_of(node.replica(0)), node.replica(1).params()) > 0.0);  // their own windows
  node.step(1e-2f);
  BOOST_TEST(max_difference(x0, node.central().params()) > 0.0);
}

// The run's last validation and its checksum are z's, and the checkpoint's "central" is z,
// not a replica.
BOOST_AUTO_TEST_CASE(the_central_model_is_validated_and_checkpointed) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const TextPart part = partition_text(corpus, 1, PartitionSpec{}).front();
  TextTrainSpec spec = two_learners(8);
  spec.checkpoint_dir = dir.file("ckpt");
  Quiet quiet;
  const TrainResult result = train_text(spec, corpus, part, quiet);
  const Checkpoint c = read_checkpoint(list_checkpoints(spec.checkpoint_dir).front());
  Model central(spec.learner.model), replica(spec.learner.model);
  SectionReader z = c.reader("central");
  z.floats(central.params(), central.param_count());
  SectionReader learner = c.reader("learner.1");
  learner.get<int64_t>();
  learner.floats(replica.params(), replica.param_count());
  BOOST_TEST(checksum_hex(central.params(), central.param_count()) == result.model_checksum);
  BOOST_TEST(evaluate_text(central, spec.learner.backend, corpus).loss == result.last().test_loss);
  BOOST_TEST(max_difference(params_of(central), replica.params()) > 0.0);
  BOOST_TEST(c.has("learner.0"));
  BOOST_TEST(c.has("central_prev"));
}

BOOST_AUTO_TEST_CASE(impossible_counts_are_refused) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const TextPart part = partition_text(corpus, 1, PartitionSpec{}).front();
  BOOST_CHECK_THROW(TextLearners(small_gpt(), TextSmaSpec{0, 0.0, 0.0, 1}, corpus, part), std::invalid_argument);
  BOOST_CHECK_THROW(TextLearners(small_gpt(), TextSmaSpec{2, 0.0, 0.0, 0}, corpus, part), std::invalid_argument);
}
