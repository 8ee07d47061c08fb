#pragma once
// What the finite-difference gradient tests share: random vectors, the central-difference
// check of an analytic gradient (kinks skipped and counted), a layer checked whole through
// L = Σ y ⊙ r, and the kernel backends this build has.
#include <boost/test/unit_test.hpp>

#include "kernels/gemm.h"
#include "learners/models/layer.h"

#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <vector>

namespace starling::testing {

inline std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng, float scale = 1.f) {
  std::normal_distribution<float> normal(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// Compares an analytic gradient with the central difference (f(v+h) − f(v−h)) / 2h at up to
// `samples` coordinates. Where the differences at h and h/2 disagree, or the one-sided
// slopes on either side of v do, a step crossed a kink (ReLU at 0, a change of max-pool
// winner) and says nothing: such coordinates are skipped, and must stay rare.
inline void expect_gradient(const char* what, std::vector<float>& v, const std::vector<float>& analytic,
                     const std::function<double()>& f, int samples = 40) {
  double one_sided_gap = 0.0;  // |right slope − left slope| of the last central difference
  auto central = [&](std::size_t i, float h) {
    const float saved = v[i];
    const double at = f();
    v[i] = saved + h;
    const double up = f();
    v[i] = saved - h;
    const double down = f();
    v[i] = saved;
    one_sided_gap = std::fabs((up - at) - (at - down)) / static_cast<double>(h);
    return (up - down) / (2.0 * static_cast<double>(h));
  };
  std::mt19937_64 pick(7);
  int kinks = 0, checked = 0;
  for (int s = 0; s < samples && !v.empty(); ++s) {
    const std::size_t i = v.size() <= static_cast<std::size_t>(samples) ? static_cast<std::size_t>(s) % v.size() : pick() % v.size();
    const double numeric = central(i, 4e-3f), gap = one_sided_gap, finer = central(i, 2e-3f);
    const double tolerance = 2e-3 + 2e-2 * std::fabs(numeric);
    if (std::fabs(numeric - finer) > tolerance || gap > tolerance) {
      ++kinks;
      continue;
    }
    ++checked;
    BOOST_TEST_CONTEXT(what << " coordinate " << i) { BOOST_TEST(std::fabs(analytic[i] - numeric) <= tolerance); }
  }
  BOOST_TEST_CONTEXT(what) { BOOST_TEST(kinks * 10 <= checked); }
}

// L = Σ y ⊙ r for fixed random r, so dL/dy = r.
inline double weighted_sum(const float* y, const std::vector<float>& r) {
  double sum = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
  return sum;
}

inline void check_layer(Layer& layer, int batch, kernels::Backend backend, std::mt19937_64& rng) {
  std::vector<float> params = random_vector(layer.param_count(), rng, 0.5f);
  std::vector<float> grads(layer.param_count());
  layer.bind(params.data(), grads.data());
  layer.reserve(batch);
  std::vector<float> x = random_vector(static_cast<std::size_t>(batch * layer.input_shape().size()), rng);
  const std::size_t out = static_cast<std::size_t>(batch * layer.output_shape().size());
  std::vector<float> y(out), r = random_vector(out, rng), dx(x.size());
  auto loss = [&] {
    layer.forward(backend, batch, x.data(), y.data());
    return weighted_sum(y.data(), r);
  };
  loss();
  layer.backward(backend, batch, x.data(), y.data(), r.data(), dx.data());
  const std::vector<float> dparams = grads;
  expect_gradient("input", x, dx, loss);
  expect_gradient("params", params, dparams, loss);
}

// The backends this build has (oneDNN is optional at configure time), oneDNN first.
inline const std::vector<kernels::Backend> kBackends = [] {
  std::vector<kernels::Backend> out;
  for (kernels::Backend b : {kernels::Backend::onednn, kernels::Backend::native})
    if (kernels::backend_available(b)) out.push_back(b);
  return out;
}();

}  // namespace starling::testing
