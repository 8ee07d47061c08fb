// Short training runs on synthetic data: the loss must fall below a bound, runs must be
// reproducible, and the two kernel backends must follow the same curve.
#define BOOST_TEST_MODULE learners_training
#include <boost/test/unit_test.hpp>

#include "learners/trainer.h"

using namespace starling;

namespace {

TrainSpec small_spec(const std::string& kind, kernels::Backend backend) {
  TrainSpec spec;
  spec.learner.model.kind = kind;
  spec.learner.model.hidden = {32};
  spec.learner.model.input = {12, 12, 1};
  spec.learner.model.classes = 4;
  spec.learner.batch = 16;
  spec.learner.backend = backend;
  spec.learner.seed = 42;
  spec.schedule.lr = 0.02;
  spec.epochs = 2;
  spec.eval_every = 1;
  spec.target_accuracy = 0.9;
  return spec;
}

TrainResult run(const TrainSpec& spec) {
  const TrainTest data = make_synthetic(800, 200, 5, spec.learner.model.input, spec.learner.model.classes);
  TrainObserver quiet;
  return train(spec, data.train, data.test, quiet);
}

// oneDNN where this build has it (the native backend's training is checked beside it below).
kernels::Backend second_backend() {
  return kernels::backend_available(kernels::Backend::onednn) ? kernels::Backend::onednn : kernels::Backend::native;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mlp_learns_synthetic_data) {
  const TrainResult r = run(small_spec("mlp", second_backend()));
  BOOST_TEST(r.history.size() == 2u);
  BOOST_TEST(r.history.front().train_loss < 1.0);
  BOOST_TEST(r.last().train_loss < 0.1);
  BOOST_TEST(r.last().test_accuracy > 0.95);
  BOOST_TEST(r.time_to_target_seconds.has_value());
}

BOOST_AUTO_TEST_CASE(cnn_learns_synthetic_data) {
  TrainSpec spec = small_spec("cnn", second_backend());
  spec.learner.model.input = {16, 16, 1};
  const TrainResult r = run(spec);
  BOOST_TEST(r.last().train_loss < 0.3);
  BOOST_TEST(r.last().test_accuracy > 0.9);
}

BOOST_AUTO_TEST_CASE(same_seed_same_model) {
  const TrainSpec spec = small_spec("mlp", kernels::Backend::native);
  BOOST_TEST(run(spec).model_checksum == run(spec).model_checksum);
  TrainSpec other = spec;
  other.learner.seed = 43;
  BOOST_TEST(run(other).model_checksum != run(spec).model_checksum);
}

BOOST_AUTO_TEST_CASE(backends_follow_the_same_curve) {
  if (!kernels::backend_available(kernels::Backend::onednn)) return;  // a build without oneDNN
  const TrainResult native = run(small_spec("mlp", kernels::Backend::native));
  const TrainResult onednn = run(small_spec("mlp", kernels::Backend::onednn));
  for (std::size_t i = 0; i < native.history.size(); ++i) {
    BOOST_TEST(native.history[i].train_loss == onednn.history[i].train_loss, boost::test_tools::tolerance(0.05));
    BOOST_TEST(native.history[i].test_accuracy == onednn.history[i].test_accuracy, boost::test_tools::tolerance(0.02));
  }
}
