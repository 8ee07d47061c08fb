// Optimizer steps and learning-rate schedules against values computed by hand, and AdamW
// (its update on every ISA path, its decay, its clipping) against a double-precision reference.
#define BOOST_TEST_MODULE learners_optim
#include <boost/test/unit_test.hpp>

#include "learners/layers/conv2d.h"
#include "learners/layers/group_norm.h"
#include "learners/layers/residual.h"
#include "learners/models/model.h"
#include "learners/optimizers/adamw_update.h"
#include "learners/optimizers/optimizer.h"
#include "learners/optimizers/schedule.h"
#include "platform/cpu_features.h"
#include "tests/isa_paths.h"

#include <cmath>
#include <random>
#include <vector>

using namespace starling;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(sgd_momentum_two_steps) {
  OptimizerSpec spec;
  spec.momentum = 0.9;
  spec.weight_decay = 0.1;
  Sgd sgd(1, spec);
  float w = 1.f;
  const float g = 0.5f;
  sgd.step(&w, &g, 1, 0.1f);  // g' = 0.5 + 0.1·1 = 0.6; v = 0.6; w = 1 − 0.06 = 0.94
  BOOST_TEST(w == 0.94f, tt::tolerance(1e-6f));
  sgd.step(&w, &g, 1, 0.1f);  // g' = 0.594; v = 0.54 + 0.594 = 1.134; w = 0.94 − 0.1134 = 0.8266
  BOOST_TEST(w == 0.8266f, tt::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(sgd_nesterov_two_steps) {
  OptimizerSpec spec;
  spec.momentum = 0.5;
  spec.nesterov = true;
  Sgd sgd(1, spec);
  float w = 2.f;
  const float g = 1.f;
  sgd.step(&w, &g, 1, 0.1f);  // v = 1; w = 2 − 0.1·(1 + 0.5·1) = 1.85
  BOOST_TEST(w == 1.85f, tt::tolerance(1e-6f));
  sgd.step(&w, &g, 1, 0.1f);  // v = 1.5; w = 1.85 − 0.1·(1 + 0.75) = 1.675
  BOOST_TEST(w == 1.675f, tt::tolerance(1e-6f));
  sgd.reset();
  sgd.step(&w, &g, 1, 0.1f);  // momentum forgotten: as the first step again
  BOOST_TEST(w == 1.525f, tt::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(adam_first_steps_move_by_lr) {
  OptimizerSpec spec;
  spec.kind = "adam";
  Adam adam(2, spec);
  float w[2] = {1.f, -1.f};
  const float g[2] = {0.3f, -4.f};
  // Bias correction makes the first update lr · g/|g| (up to epsilon), whatever |g|.
  adam.step(w, g, 2, 0.01f);
  BOOST_TEST(w[0] == 0.99f, tt::tolerance(1e-5f));
  BOOST_TEST(w[1] == -0.99f, tt::tolerance(1e-5f));
  // Second step with the same gradient: m̂ = g, v̂ = g², again lr · sign(g).
  adam.step(w, g, 2, 0.01f);
  BOOST_TEST(w[0] == 0.98f, tt::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(unknown_optimizer_is_rejected) {
  OptimizerSpec spec;
  spec.kind = "rmsprop";
  BOOST_CHECK_THROW(make_optimizer(4, spec), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(schedules) {
  ScheduleSpec warm{"constant", 0.4, 4, 1.0, 0.1};
  Schedule constant(warm, 10, 100);
  BOOST_TEST(constant.lr(0) == 0.1, tt::tolerance(1e-12));
  BOOST_TEST(constant.lr(3) == 0.4, tt::tolerance(1e-12));
  BOOST_TEST(constant.lr(50) == 0.4, tt::tolerance(1e-12));

  Schedule step({"step", 1.0, 0, 2.0, 0.5}, 10, 100);
  BOOST_TEST(step.lr(19) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(step.lr(20) == 0.5, tt::tolerance(1e-12));
  BOOST_TEST(step.lr(45) == 0.25, tt::tolerance(1e-12));
  BOOST_TEST(step.is_drop(20));
  BOOST_TEST(!step.is_drop(21));
  BOOST_TEST(!step.is_drop(0));  // no step before it

  // A decay boundary inside warm-up is no drop; the first step after it is, when the rate
  // decayed meanwhile (warm-up's peak 1.0, then 0.25).
  Schedule warm_step({"step", 1.0, 20, 1.0, 0.5}, 10, 100);
  BOOST_TEST(!warm_step.is_drop(10));
  BOOST_TEST(!warm_step.is_drop(19));
  BOOST_TEST(warm_step.is_drop(20));
  BOOST_TEST(!warm_step.is_drop(21));
  BOOST_TEST(warm_step.is_drop(30));

  Schedule cosine({"cosine", 1.0, 0, 1.0, 0.1}, 10, 100);
  BOOST_TEST(cosine.lr(0) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(cosine.lr(50) == 0.5, tt::tolerance(1e-12));
  BOOST_TEST(cosine.lr(100) == 0.0, tt::tolerance(1e-12));
  BOOST_CHECK_THROW(Schedule({"linear", 1.0, 0, 1.0, 0.1}, 10, 100), std::invalid_argument);
}

// AdamW against a double-precision reference: PyTorch's AdamW step on decayed and plain
// spans, with global-norm clipping as clip_grad_norm_ does it.
namespace {

struct ReferenceAdamW {
  double beta1, beta2, eps, wd, clip;
  std::vector<double> m, v;
  int64_t t = 0;
  // `decayed[i]`: element i takes weight decay.
  void step(std::vector<double>& w, const std::vector<float>& g, const std::vector<bool>& decayed, double lr) {
    ++t;
    double norm = 0.0;
    for (float x : g) norm += static_cast<double>(x) * x;
    norm = std::sqrt(norm);
    const double scale = clip > 0 ? std::min(1.0, clip / (norm + 1e-6)) : 1.0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double gi = g[i] * scale;
      if (decayed[i]) w[i] *= 1.0 - lr * wd;
      m[i] = beta1 * m[i] + (1 - beta1) * gi;
      v[i] = beta2 * v[i] + (1 - beta2) * gi * gi;
      const double mhat = m[i] / (1 - std::pow(beta1, t)), vhat = v[i] / (1 - std::pow(beta2, t));
      w[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(adamw_matches_a_double_reference_on_every_isa) {
  namespace sp = starling::platform;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (sp::Isa isa : starling::testing::supported_isas()) {
    sp::force_isa(isa);
    for (std::size_t n : {1u, 7u, 16u, 17u, 63u, 1031u}) {
      for (double clip : {0.0, 0.5, 1e3}) {
        // Two decayed spans with ragged edges, the rest plain.
        const std::vector<ParamSpan> spans = n > 10 ? std::vector<ParamSpan>{{1, n / 3}, {n / 2, n / 2 - 1}}
                                                    : std::vector<ParamSpan>{{0, n}};
        std::vector<bool> decayed(n, false);
        for (const ParamSpan& s : spans)
          for (std::size_t i = s.offset; i < s.offset + s.count; ++i) decayed[i] = true;
        OptimizerSpec spec;
        spec.kind = "adamw", spec.beta1 = 0.8, spec.beta2 = 0.95, spec.weight_decay = 0.1, spec.clip_norm = clip;
        AdamW adamw(n, spec, spans);
        ReferenceAdamW ref{0.8, 0.95, 1e-8, 0.1, clip, std::vector<double>(n), std::vector<double>(n)};
        std::vector<float> w(n);
        for (float& x : w) x = normal(rng);
        std::vector<double> w_ref(w.begin(), w.end());
        for (int t = 0; t < 5; ++t) {
          std::vector<float> g(n);
          for (float& x : g) x = normal(rng) * (t + 1);
          const double lr = 1e-2 * (t + 1);
          adamw.step(w.data(), g.data(), n, static_cast<float>(lr));
          ref.step(w_ref, g, decayed, lr);
        }
        BOOST_TEST_CONTEXT("isa " << sp::isa_name(isa) << ", n " << n << ", clip " << clip) {
          // m is a sum of gradients of either sign (up to 5 in size), so it is compared in units
          // of the gradient's size; v and w have no cancellation of that kind.
          for (std::size_t i = 0; i < n; ++i) BOOST_TEST(std::abs((*adamw.state(0))[i] - ref.m[i]) < 5e-6);
          for (std::size_t i = 0; i < n; ++i) BOOST_TEST((*adamw.state(1))[i] == ref.v[i], tt::tolerance(1e-5));
          for (std::size_t i = 0; i < n; ++i) BOOST_TEST(std::abs(w[i] - w_ref[i]) < 1e-6 * (1 + std::abs(w_ref[i])));
          BOOST_TEST(adamw.step_count() == 5);
        }
      }
    }
  }
  sp::force_isa(sp::detected_isa());
}

BOOST_AUTO_TEST_CASE(squared_norm_matches_double_on_every_isa) {
  namespace sp = starling::platform;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.f, 3.f);
  for (sp::Isa isa : starling::testing::supported_isas()) {
    sp::force_isa(isa);
    for (long n : {0L, 1L, 7L, 8L, 9L, 1000L, 4099L}) {
      std::vector<float> g(static_cast<std::size_t>(n));
      double want = 0.0;
      for (float& x : g) x = normal(rng), want += static_cast<double>(x) * x;
      BOOST_TEST(squared_norm(n, g.data()) == want, tt::tolerance(1e-12));
    }
  }
  sp::force_isa(sp::detected_isa());
}

BOOST_AUTO_TEST_CASE(adamw_decays_matrices_only_and_clips_to_the_global_norm) {
  OptimizerSpec spec;
  spec.kind = "adamw", spec.weight_decay = 0.5;
  // With a zero gradient Adam's step is zero: only the decay moves w, and only on the span.
  AdamW decay_only(6, spec, {{2, 3}});
  std::vector<float> w{1, 1, 1, 1, 1, 1};
  const std::vector<float> zero(6, 0.f);
  decay_only.step(w.data(), zero.data(), 6, 0.1f);
  BOOST_TEST(w == std::vector<float>({1, 1, 0.95f, 0.95f, 0.95f, 1}), tt::per_element());

  // A gradient of norm 10 clipped to 1 steps as the gradient scaled by 1 / (10 + 1e-6)
  // unclipped; one of norm 0.5 is left as it is.
  spec.weight_decay = 0.0;
  spec.clip_norm = 1.0;
  OptimizerSpec unclipped = spec;
  unclipped.clip_norm = 0.0;
  const std::vector<float> g{6.f, -8.f};  // norm 10
  const float s = static_cast<float>(1.0 / (10.0 + 1e-6));
  const std::vector<float> g_scaled{6.f * s, -8.f * s};
  AdamW clipped(2, spec, {}), reference(2, unclipped, {});
  std::vector<float> a{0.5f, 0.5f}, b = a;
  for (int t = 0; t < 3; ++t) {
    clipped.step(a.data(), g.data(), 2, 0.1f);
    reference.step(b.data(), g_scaled.data(), 2, 0.1f);
  }
  BOOST_TEST(clipped.last_grad_norm() == 10.0, tt::tolerance(1e-12));
  BOOST_TEST(a == b, tt::per_element());
  const std::vector<float> small{0.3f, 0.4f};  // norm 0.5
  AdamW small_clipped(2, spec, {}), small_plain(2, unclipped, {});
  a = b = {0.5f, 0.5f};
  small_clipped.step(a.data(), small.data(), 2, 0.1f);
  small_plain.step(b.data(), small.data(), 2, 0.1f);
  BOOST_TEST(a == b, tt::per_element());

  // Reset forgets the moments and the step count; spans outside the arena are refused.
  clipped.reset();
  BOOST_TEST(clipped.step_count() == 0);
  BOOST_TEST((*clipped.state(0))[0] == 0.f);
  BOOST_CHECK_THROW(AdamW(4, spec, {{2, 3}}), std::invalid_argument);
  BOOST_CHECK_THROW(AdamW(8, spec, {{4, 2}, {1, 1}}), std::invalid_argument);
  BOOST_TEST(dynamic_cast<AdamW*>(make_optimizer(8, spec, {{0, 4}}).get()) != nullptr);
}

BOOST_AUTO_TEST_CASE(warmup_then_cosine_to_min_lr) {
  ScheduleSpec spec{"cosine", 1e-3, 10, 1.0, 0.1, 1e-4};
  const Schedule s(spec, 7, 110);
  for (int64_t step : {0, 4, 9}) BOOST_TEST(s.lr(step) == 1e-3 * (step + 1) / 10.0, tt::tolerance(1e-12));
  for (int64_t step : {10, 35, 60, 97, 110}) {
    const double progress = (step - 10) / 100.0;
    BOOST_TEST(s.lr(step) == 1e-4 + (1e-3 - 1e-4) * 0.5 * (1 + std::cos(M_PI * progress)), tt::tolerance(1e-12));
  }
  BOOST_TEST(s.lr(10) == 1e-3, tt::tolerance(1e-12));
  BOOST_TEST(s.lr(60) == 5.5e-4, tt::tolerance(1e-12));
  BOOST_TEST(s.lr(110) == 1e-4, tt::tolerance(1e-12));
  BOOST_TEST(s.lr(500) == 1e-4, tt::tolerance(1e-12));  // past the end: stays at the floor
  BOOST_TEST(!s.is_drop(50));  // cosine never resets SMA replicas
}

// What AdamW decays: each dense weight and convolution kernel at its arena offset (layers
// padded to 16 floats), never a bias or a normalisation's scale and shift.
BOOST_AUTO_TEST_CASE(the_decayed_spans_are_the_matrices) {
  ModelSpec mlp;
  mlp.hidden = {16};
  mlp.input = {8, 8, 1}, mlp.classes = 3;
  const Model model(mlp);
  // dense 64→16 (1024 weights, 16 biases), then dense 16→3 at 1040 (48 weights, 3 biases).
  BOOST_TEST((model.matrix_spans() == std::vector<ParamSpan>{{0, 1024}, {1040, 48}}));

  std::vector<std::unique_ptr<Layer>> body, shortcut;
  body.push_back(std::make_unique<Conv2D>(Shape{6, 6, 2}, 4, 3, 2, 1, true));  // 72 weights, 4 biases
  body.push_back(std::make_unique<GroupNorm>(Shape{3, 3, 4}, 2));              // 8 parameters at 80
  shortcut.push_back(std::make_unique<Conv2D>(Shape{6, 6, 2}, 4, 1, 2, 0, false));  // 8 weights
  const Residual block(LayerChain(Shape{6, 6, 2}, std::move(body)), LayerChain(Shape{6, 6, 2}, std::move(shortcut)));
  // The body spans 80 + 16 floats; the shortcut's kernel starts after it.
  BOOST_TEST((block.matrix_spans() == std::vector<ParamSpan>{{0, 72}, {96, 8}}));
}
