// Short training runs on synthetic data: the loss must fall below a bound, runs must be
// reproducible, and the two kernel backends must follow the same curve.
#define BOOST_TEST_MODULE learners_training
#include <boost/test/unit_test.hpp>

#include "learners/optimizers/optimizer.h"
#include "learners/replicas/trainer.h"
#include "learners/tasks/loss.h"
#include "platform/cpu_features.h"
#include "tests/isa_paths.h"

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
  spec.target = 0.9;
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

namespace {

// Five SGD steps on one model, with the step as a pass after the backward or fused into it
// (ParamUpdate); returns the parameters and the velocity after them.
std::vector<float> five_steps(const ModelSpec& spec, const Dataset& train, bool fused) {
  Model model(spec);
  model.init(7);
  OptimizerSpec o;
  o.momentum = 0.9, o.weight_decay = 1e-3;
  std::vector<float> x(static_cast<std::size_t>(13) * spec.input.size()), dlogits(13 * spec.classes);
  std::vector<int32_t> labels(13);
  std::vector<float> out;
  for (bool nesterov : {false, true}) {
    o.nesterov = nesterov;
    auto optimizer = make_optimizer(model.param_count(), o);
    for (uint32_t s = 0; s < 5; ++s) {
      std::vector<uint32_t> rows(13);
      for (uint32_t i = 0; i < 13; ++i) rows[i] = (s * 13 + i) % train.size();
      train.gather(rows.data(), 13, x.data(), labels.data());
      const float* logits = model.forward(kernels::Backend::native, 13, x.data());
      softmax_cross_entropy(13, spec.classes, logits, labels.data(), dlogits.data());
      ParamUpdate update;
      if (fused && optimizer->fused_step(model.params(), 0.05f, update)) {
        model.backward(kernels::Backend::native, 13, x.data(), dlogits.data(), &update);
      } else {
        model.backward(kernels::Backend::native, 13, x.data(), dlogits.data());
        optimizer->step(model.params(), model.grads(), model.param_count(), 0.05f);
      }
    }
    out.insert(out.end(), optimizer->state(0)->begin(), optimizer->state(0)->end());
  }
  out.insert(out.end(), model.params(), model.params() + model.param_count());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_fused_sgd_step_matches_the_separate_pass) {
  // Dense layers fuse the step into their weight-gradient GEMM (on AVX-512) and every other
  // layer with parameters takes it right after its backward; both must land on the bits of
  // the pass over the whole arena (same arithmetic, same association), on every ISA path,
  // through residual blocks too.
  for (const char* kind : {"mlp", "cnn", "resnet8"}) {
    ModelSpec spec;
    spec.kind = kind;
    spec.input = {16, 16, 1};
    spec.classes = 4;
    const TrainTest data = make_synthetic(64, 8, 3, spec.input, spec.classes);
    for (platform::Isa isa : starling::testing::supported_isas()) {
      platform::force_isa(isa);
      const std::vector<float> separate = five_steps(spec, data.train, false);
      const std::vector<float> fused = five_steps(spec, data.train, true);
      BOOST_TEST_INFO(kind << " on " << platform::isa_name(isa));
      BOOST_TEST(fused == separate);
    }
    platform::force_isa(platform::detected_isa());
  }
}
