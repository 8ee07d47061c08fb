// Language modelling as a task, with the one Learner: an untrained GPT scores near ln 256
// nats per byte and bits per byte is the loss / ln 2; a learner on a periodic text learns it
// and repeats its bits; learner j draws windows of its own, learner 0 those of a lone
// learner; a repositioned learner draws the windows of the step it goes on from, with fresh
// moments; impossible specs are refused.
#define BOOST_TEST_MODULE learners_text_task
#include <boost/test/unit_test.hpp>

#include "learners/data/sampler.h"
#include "tests/learners/small_text.h"

#include <cmath>

using namespace starling;
using namespace starling::testing;

namespace {

std::vector<float> params_of(const Model& m) { return {m.params(), m.params() + m.param_count()}; }

// `steps` steps at a constant rate; the learner's last loss.
double train(Learner& learner, int steps, float lr = 1e-2f) {
  double loss = 0.0;
  for (int s = 0; s < steps; ++s) loss = learner.step(lr);
  return loss;
}

}  // namespace

BOOST_AUTO_TEST_CASE(untrained_model_scores_near_uniform_and_bpb_is_loss_over_ln2) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  Model model(small_gpt().model);
  model.init(1);
  const Evaluation e = evaluate_text(model, kernels::Backend::native, corpus, 3);
  BOOST_TEST(std::abs(e.loss - std::log(256.0)) < 0.1);
  BOOST_TEST(periodic_task(corpus)->evaluate(model, kernels::Backend::native).loss == e.loss,
             boost::test_tools::tolerance(1e-9));  // 32 windows a batch, not 3
  BOOST_TEST(std::abs(bits_per_byte(std::log(256.0)) - 8.0) < 1e-12);
  BOOST_TEST(periodic_task(corpus)->reached(e, 8.1));
  BOOST_TEST(!periodic_task(corpus)->reached(e, 7.9));
}

BOOST_AUTO_TEST_CASE(a_learner_learns_a_periodic_text_and_repeats_its_bits) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = periodic_task(corpus);
  Learner a(small_gpt(), task), b(small_gpt(), task);
  train(a, 120), train(b, 120);
  BOOST_TEST(params_of(a.model()) == params_of(b.model()), boost::test_tools::per_element());
  BOOST_TEST(task->evaluate(a.model(), kernels::Backend::native).loss < 0.2);  // from ln 256 ≈ 5.5
  BOOST_TEST(a.steps() == 120);
}

// Learner j's windows are its own; learner 0's are a lone learner's, whatever the stream
// of other peers.
BOOST_AUTO_TEST_CASE(each_learner_draws_its_own_windows) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = periodic_task(corpus);
  LearnerSpec first = small_gpt(), second = small_gpt(), peer = small_gpt();
  second.learner = 1;
  peer.stream = 3;
  std::vector<float> x0(4 * 12), x1(4 * 12), xp(4 * 12), again(4 * 12);
  std::vector<int32_t> t(4 * 12);
  task->batch_source(first)->fill(5, x0.data(), t.data());
  task->batch_source(first)->fill(5, again.data(), t.data());
  task->batch_source(second)->fill(5, x1.data(), t.data());
  task->batch_source(peer)->fill(5, xp.data(), t.data());
  BOOST_TEST(x0 == again, boost::test_tools::per_element());
  BOOST_TEST(x0 != x1);
  BOOST_TEST(x0 != xp);
  // Targets are the inputs shifted by one byte.
  for (int i = 0; i < 4; ++i)
    for (int p = 0; p + 1 < 12; ++p) BOOST_TEST(t[i * 12 + p] == static_cast<int32_t>(xp[i * 12 + p + 1]));
  // Dropout keys: distinct per learner, learner 0's a function of the seed and step alone.
  BOOST_TEST(task->batch_source(first)->dropout_key(5) == mix_seed(first.seed, 5));
  BOOST_TEST(task->batch_source(second)->dropout_key(5) != task->batch_source(first)->dropout_key(5));
}

// A learner moved to step 40 goes on with step 40's windows and fresh AdamW moments: from the
// same model it takes the step a fresh learner at step 40 would.
BOOST_AUTO_TEST_CASE(a_repositioned_learner_goes_on_from_the_job_step) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  const auto task = periodic_task(corpus);
  Learner moved(small_gpt(), task), fresh(small_gpt(), task);
  train(moved, 3);
  std::copy(moved.model().params(), moved.model().params() + moved.model().param_count(), fresh.model().params());
  moved.reposition(40);
  train(fresh, 40, 0.0f);  // steps 0..39 with no rate: only the moments and the position move
  fresh.optimizer().reset();
  moved.step(1e-2f), fresh.step(1e-2f);
  BOOST_TEST(moved.steps() == 41);
  BOOST_TEST(params_of(moved.model()) == params_of(fresh.model()), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(impossible_specs_are_refused) {
  TempDir dir;
  const TextCorpus corpus = periodic_corpus(dir);
  LearnerSpec spec = small_gpt();
  spec.batch = 0;
  BOOST_CHECK_THROW(Learner(spec, periodic_task(corpus)), std::invalid_argument);
  spec = small_gpt();
  spec.model.context = 8, spec.model.input = {1, 8, 1};  // the task's windows are 13 bytes
  BOOST_CHECK_THROW(Learner(spec, periodic_task(corpus)), std::invalid_argument);
  const TextPart nothing{{0, 5, 0}};
  BOOST_CHECK_THROW(Learner(small_gpt(), std::make_shared<const TextTask>(corpus, nothing, 13)), std::invalid_argument);
}
