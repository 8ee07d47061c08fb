// The sequence kernels (kernels/sequence_ops.h) against double-precision references on
// every ISA path this CPU supports (forced with force_isa), on ragged shapes: lengths below,
// at and past the kernels' 16 lanes and their 64-float blocks, and inputs reaching GELU's
// far tails and softmax rows of very unequal scores.
#define BOOST_TEST_MODULE kernels_sequence_ops
#include <boost/test/unit_test.hpp>

#include "kernels/sequence_ops.h"
#include "platform/cpu_features.h"
#include "tests/isa_paths.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;

namespace {

using starling::testing::supported_isas;

// Runs f once per supported ISA with that ISA forced, then restores the CPU's best.
template <class F>
void on_every_isa(F f) {
  for (sp::Isa isa : supported_isas()) {
    sp::force_isa(isa);
    BOOST_TEST_CONTEXT("isa " << sp::isa_name(isa)) { f(); }
  }
  sp::force_isa(sp::detected_isa());
}

std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float stddev = 1.f) {
  std::normal_distribution<float> normal(0.f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }

}  // namespace

BOOST_AUTO_TEST_CASE(gelu_matches_double_reference) {
  std::mt19937 rng(1);
  for (long n : {1L, 7L, 16L, 33L, 1001L}) {
    std::vector<float> x = random_vector(static_cast<std::size_t>(n), rng, 3.f), dy = random_vector(x.size(), rng);
    x[0] = n > 1 ? -9.5f : 0.f;  // a far tail, where Φ is 1e-21
    on_every_isa([&] {
      std::vector<float> y(x.size()), dx(x.size()), slope(x.size()), y_with_slope(x.size());
      sk::gelu_forward(n, x.data(), y.data());
      sk::gelu_backward(n, x.data(), dy.data(), dx.data());
      sk::gelu_forward(n, x.data(), y_with_slope.data(), slope.data());
      BOOST_TEST(y_with_slope == y);
      for (std::size_t i = 0; i < x.size(); ++i) BOOST_TEST(slope[i] * dy[i] == dx[i]);  // the same derivative
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = x[i], want = v * phi(v);
        BOOST_TEST(std::abs(y[i] - want) <= 1e-6 * std::abs(want) + 1e-12, "gelu(" << v << ") = " << y[i] << ", want " << want);
        // Φ + x·φ crosses zero near x = −0.75: the bound is on its two terms' size.
        const double slope = phi(v) + v * pdf(v), size = phi(v) + std::abs(v) * pdf(v);
        BOOST_TEST(std::abs(dx[i] - dy[i] * slope) <= (2e-6 * size + 1e-12) * std::abs(dy[i]),
                   "gelu'(" << v << ")·dy = " << dx[i] << ", want " << dy[i] * slope);
      }
      std::vector<float> in_place = x;  // y may be x
      sk::gelu_forward(n, in_place.data(), in_place.data());
      sk::gelu_forward(n, x.data(), y.data());
      BOOST_TEST(in_place == y);
    });
  }
}

BOOST_AUTO_TEST_CASE(causal_softmax_matches_double_reference) {
  std::mt19937 rng(2);
  for (int t : {1, 5, 16, 17, 64, 70})
    for (long count : {1L, 3L}) {
      const std::size_t size = static_cast<std::size_t>(count) * t * t;
      const std::vector<float> s = random_vector(size, rng, 4.f), dp = random_vector(size, rng);
      const float scale = 1.f / std::sqrt(32.f);
      on_every_isa([&] {
        std::vector<float> p = s, d = dp;
        for (long m = 0; m < count; ++m)  // dP past the causal part is never read
          for (int i = 0; i < t; ++i)
            for (int j = i + 1; j < t; ++j) d[(m * t + i) * t + j] = std::nanf("");
        sk::causal_softmax_forward(count, t, scale, p.data());
        sk::causal_softmax_backward(count, t, scale, p.data(), d.data());
        for (long m = 0; m < count; ++m)
          for (int i = 0; i < t; ++i) {
            const long row = (m * t + i) * t;
            double top = -1e300, sum = 0.0;
            for (int j = 0; j <= i; ++j) top = std::max(top, static_cast<double>(s[row + j]));
            for (int j = 0; j <= i; ++j) sum += std::exp(scale * (s[row + j] - top));
            std::vector<double> want(static_cast<std::size_t>(t), 0.0);
            double dot = 0.0;
            for (int j = 0; j <= i; ++j) {
              want[j] = std::exp(scale * (s[row + j] - top)) / sum;
              dot += want[j] * dp[row + j];
            }
            for (int j = 0; j < t; ++j) {
              BOOST_TEST(std::abs(p[row + j] - want[j]) <= 1e-6 * want[j] + 1e-8, "t " << t << " P[" << i << "," << j << "]");
              const double ds = scale * want[j] * (dp[row + j] - dot);
              const double size = scale * want[j] * (std::abs(dp[row + j]) + std::abs(dot));
              BOOST_TEST(std::abs(d[row + j] - ds) <= 1e-5 * size + 1e-8, "t " << t << " dS[" << i << "," << j << "]");
            }
          }
      });
    }
}

BOOST_AUTO_TEST_CASE(layernorm_matches_double_reference) {
  std::mt19937 rng(3);
  for (int c : {1, 3, 16, 37, 128})
    for (long rows : {1L, 5L}) {
      const std::size_t size = static_cast<std::size_t>(rows) * c;
      std::vector<float> x = random_vector(size, rng, 2.f), dy = random_vector(size, rng);
      for (float& v : x) v += 3.f;  // a mean large against the spread
      const std::vector<float> gamma = random_vector(static_cast<std::size_t>(c), rng),
                               beta = random_vector(static_cast<std::size_t>(c), rng);
      // x̂ = (x − μ)/σ, y = γx̂ + β; dβ = Σ dy, dγ = Σ dy·x̂; dx = (g − mean g − x̂·mean(g·x̂))/σ, g = γ·dy.
      std::vector<double> y(size), dx(size), dx_size(size), dgamma(static_cast<std::size_t>(c)), dbeta(static_cast<std::size_t>(c));
      for (long r = 0; r < rows; ++r) {
        const float* xr = x.data() + r * c;
        double mu = 0.0, var = 0.0;
        for (int j = 0; j < c; ++j) mu += xr[j];
        mu /= c;
        for (int j = 0; j < c; ++j) var += (xr[j] - mu) * (xr[j] - mu);
        const double rstd = 1.0 / std::sqrt(var / c + sk::kLayerNormEpsilon);
        double a = 0.0, b = 0.0;
        for (int j = 0; j < c; ++j) {
          const double xhat = (xr[j] - mu) * rstd, g = gamma[j] * dy[r * c + j];
          y[r * c + j] = xhat * gamma[j] + beta[j];
          a += g / c, b += g * xhat / c;
          dgamma[j] += dy[r * c + j] * xhat, dbeta[j] += dy[r * c + j];
        }
        for (int j = 0; j < c; ++j) {
          const double g = gamma[j] * dy[r * c + j], xhat_b = (xr[j] - mu) * rstd * b;
          dx[r * c + j] = rstd * (g - a - xhat_b);
          dx_size[r * c + j] = rstd * (std::abs(g) + std::abs(a) + std::abs(xhat_b));  // its terms' size
        }
      }
      on_every_isa([&] {
        std::vector<float> out(size), mean(rows), rstd(rows), dg(c), db(c), dxf(size);
        sk::layernorm_forward(rows, c, x.data(), gamma.data(), beta.data(), out.data(), mean.data(), rstd.data());
        sk::layernorm_backward(rows, c, x.data(), dy.data(), gamma.data(), mean.data(), rstd.data(), dg.data(),
                               db.data(), dxf.data());
        for (std::size_t i = 0; i < size; ++i) {
          BOOST_TEST(std::abs(out[i] - y[i]) <= 1e-5 * (std::abs(y[i]) + 1.0), "c " << c << " y[" << i << "]");
          BOOST_TEST(std::abs(dxf[i] - dx[i]) <= 1e-5 * dx_size[i] + 1e-7, "c " << c << " dx[" << i << "]");
        }
        for (int j = 0; j < c; ++j) {
          BOOST_TEST(std::abs(dg[j] - dgamma[j]) <= 1e-5 * rows * 4.0, "c " << c << " dgamma[" << j << "]");
          BOOST_TEST(std::abs(db[j] - dbeta[j]) <= 1e-5 * rows * 4.0, "c " << c << " dbeta[" << j << "]");
        }
        std::vector<float> db_only(c);  // no input gradient asked for
        sk::layernorm_backward(rows, c, x.data(), dy.data(), gamma.data(), mean.data(), rstd.data(), dg.data(),
                               db_only.data(), nullptr);
        BOOST_TEST(db_only == db);
      });
    }
}

BOOST_AUTO_TEST_CASE(vocab_cross_entropy_matches_double_reference) {
  std::mt19937 rng(4);
  for (int vocab : {1, 7, 16, 65, 256, 300})
    for (long rows : {1L, 6L}) {
      const std::size_t size = static_cast<std::size_t>(rows) * vocab;
      const std::vector<float> logits = random_vector(size, rng, 5.f);
      std::vector<int32_t> targets(static_cast<std::size_t>(rows));
      for (auto& t : targets) t = static_cast<int32_t>(rng() % static_cast<unsigned>(vocab));
      double loss = 0.0;
      std::vector<double> grad(size);
      for (long r = 0; r < rows; ++r) {
        const float* z = logits.data() + r * vocab;
        const double top = *std::max_element(z, z + vocab);
        double sum = 0.0;
        for (int j = 0; j < vocab; ++j) sum += std::exp(z[j] - top);
        loss += (std::log(sum) - (z[targets[r]] - top)) / rows;
        for (int j = 0; j < vocab; ++j)
          grad[r * vocab + j] = (std::exp(z[j] - top) / sum - (j == targets[r] ? 1.0 : 0.0)) / rows;
      }
      on_every_isa([&] {
        std::vector<float> d(size);
        const double with_grad = sk::vocab_cross_entropy(rows, vocab, logits.data(), targets.data(), d.data());
        const double without = sk::vocab_cross_entropy(rows, vocab, logits.data(), targets.data(), nullptr);
        BOOST_TEST(std::abs(with_grad - loss) <= 1e-6 * (loss + 1e-3), "vocab " << vocab << " loss");
        BOOST_TEST(std::abs(without - loss) <= 1e-6 * (loss + 1e-3), "vocab " << vocab << " loss, no gradient");
        for (std::size_t i = 0; i < size; ++i)
          BOOST_TEST(std::abs(d[i] - grad[i]) <= 1e-6 * std::abs(grad[i]) + 1e-7 / rows, "vocab " << vocab << " d[" << i << "]");
      });
    }
}
