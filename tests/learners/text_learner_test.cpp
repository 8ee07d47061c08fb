// The text learner and its evaluation on a small GPT: an untrained model scores near
// ln 256 nats per byte, bits per byte is the loss / ln 2, the same seed gives the same bits,
// and training on a periodic text drives the validation loss far below the start.
#define BOOST_TEST_MODULE learners_text_learner
#include <boost/test/unit_test.hpp>

#include "learners/text_learner.h"
#include "learners/text_trainer.h"
#include "tests/learners/small_text.h"

#include <cmath>

using namespace starling;
using namespace starling::testing;

BOOST_AUTO_TEST_CASE(untrained_model_scores_near_uniform_and_bpb_is_loss_over_ln2) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  Model model(small_gpt().model);
  model.init(1);
  const TextEvaluation e = evaluate_text(model, kernels::Backend::native, corpus, 3);
  BOOST_TEST(std::abs(e.loss - std::log(256.0)) < 0.1);
  BOOST_TEST(e.bpb == e.loss / std::log(2.0), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(std::abs(bits_per_byte(std::log(256.0)) - 8.0) < 1e-12);
}

BOOST_AUTO_TEST_CASE(training_learns_a_periodic_text_and_repeats_its_bits) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const TextPart part = partition_text(corpus, 1, PartitionSpec{}).front();
  TextTrainSpec spec;
  spec.learner = small_gpt();
  spec.schedule.lr = 1e-2;
  spec.schedule.kind = "constant";
  spec.steps = 120;
  spec.eval_steps = 60;
  spec.target_bpb = 1.0;
  Quiet quiet;
  const TrainResult a = train_text(spec, corpus, part, quiet);
  const TrainResult b = train_text(spec, corpus, part, quiet);
  BOOST_TEST_REQUIRE(a.history.size() == 2u);
  BOOST_TEST(a.model_checksum == b.model_checksum);
  BOOST_TEST(a.last().test_loss < 0.2);  // from ln 256 ≈ 5.5: the period is learnt
  BOOST_TEST(a.time_to_target_seconds.has_value());
  BOOST_TEST(a.samples == 120 * 4);
}

BOOST_AUTO_TEST_CASE(a_batch_below_one_is_refused) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  TextLearnerSpec spec = small_gpt();
  spec.batch = 0;
  BOOST_CHECK_THROW(TextLearner(spec, corpus, partition_text(corpus, 1, PartitionSpec{}).front()), std::invalid_argument);
}
