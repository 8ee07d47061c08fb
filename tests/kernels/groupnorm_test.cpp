// The group-normalisation kernels against a double-precision reference on every ISA path
// this CPU supports, on shapes whose positions and channels are not multiples of the
// vector width or of the four positions a pass sums: forward with and without the fused
// ReLU, backward with and without it, with and without an input gradient.
#define BOOST_TEST_MODULE kernels_groupnorm
#include <boost/test/unit_test.hpp>

#include "platform/cpu_features.h"
#include "kernels/ops.h"
#include "tests/isa_paths.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;

namespace {

using starling::testing::supported_isas;

std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float mean = 0.f) {
  std::normal_distribution<float> normal(mean, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

struct Reference {
  std::vector<double> y, dx, dgamma, dbeta;
};

// x̂ = (x − μ)/σ per sample and group, y = relu?(γ x̂ + β); with dy' = dy·[y > 0]:
// dβ = Σ dy', dγ = Σ dy' x̂, dx = (γ dy' − mean(γ dy') − x̂ mean(γ dy' x̂)) / σ.
Reference reference(const sk::NormShape& s, const std::vector<float>& x, const std::vector<float>& gamma,
                    const std::vector<float>& beta, const std::vector<float>& dy, bool relu) {
  const int cg = s.channels / s.groups;
  const long size = s.positions * s.channels;
  const double n = static_cast<double>(s.positions) * cg;
  Reference r{std::vector<double>(x.size()), std::vector<double>(x.size()), std::vector<double>(s.channels),
              std::vector<double>(s.channels)};
  for (int b = 0; b < s.batch; ++b)
    for (int g = 0; g < s.groups; ++g) {
      auto at = [&](long p, int j) { return b * size + p * s.channels + g * cg + j; };
      double mean = 0.0, var = 0.0;
      for (long p = 0; p < s.positions; ++p)
        for (int j = 0; j < cg; ++j) mean += x[at(p, j)];
      mean /= n;
      for (long p = 0; p < s.positions; ++p)
        for (int j = 0; j < cg; ++j) var += (x[at(p, j)] - mean) * (x[at(p, j)] - mean);
      const double rstd = 1.0 / std::sqrt(var / n + sk::kGroupNormEpsilon);
      double m1 = 0.0, m2 = 0.0;
      std::vector<double> g_dy(static_cast<std::size_t>(s.positions) * cg), xhat(g_dy.size());
      for (long p = 0; p < s.positions; ++p)
        for (int j = 0; j < cg; ++j) {
          const long i = at(p, j);
          const int ch = g * cg + j;
          xhat[p * cg + j] = (x[i] - mean) * rstd;
          const double v = gamma[ch] * xhat[p * cg + j] + beta[ch];
          r.y[i] = relu && v <= 0.0 ? 0.0 : v;
          const double d = relu && v <= 0.0 ? 0.0 : dy[i];
          r.dbeta[ch] += d, r.dgamma[ch] += d * xhat[p * cg + j];
          g_dy[p * cg + j] = gamma[ch] * d;
          m1 += g_dy[p * cg + j], m2 += g_dy[p * cg + j] * xhat[p * cg + j];
        }
      for (long p = 0; p < s.positions; ++p)
        for (int j = 0; j < cg; ++j)
          r.dx[at(p, j)] = (g_dy[p * cg + j] - m1 / n - xhat[p * cg + j] * m2 / n) * rstd;
    }
  return r;
}

// Float sums over up to a few hundred values: relative to the data's scale.
void expect_close(const float* got, const std::vector<double>& want, double scale, const std::string& who) {
  int bad = 0;
  for (std::size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - want[i]) <= 2e-5 * scale * (1.0 + std::fabs(want[i])))) {
      ++bad;
      BOOST_ERROR(who << " [" << i << "] = " << got[i] << ", want " << want[i]);
    }
}

void check(const sk::NormShape& s, std::mt19937& rng) {
  const long n = s.batch * s.positions * s.channels;
  // A mean far from zero: the two-pass statistics must not lose the spread to it.
  const std::vector<float> x = random_vector(n, rng, 30.f), dy = random_vector(n, rng);
  const std::vector<float> gamma = random_vector(s.channels, rng), beta = random_vector(s.channels, rng);
  const double sums = static_cast<double>(s.positions) * s.channels / s.groups;
  for (bool relu : {false, true}) {
    const Reference want = reference(s, x, gamma, beta, dy, relu);
    for (sp::Isa isa : supported_isas()) {
      sp::force_isa(isa);
      const std::string who = std::string(sp::isa_name(isa)) + " b" + std::to_string(s.batch) + " p" +
                              std::to_string(s.positions) + " c" + std::to_string(s.channels) + " g" +
                              std::to_string(s.groups) + (relu ? " relu" : "");
      std::vector<float> y(n), mean(s.batch * s.groups), rstd(mean.size()), scratch(sk::groupnorm_scratch(s.channels));
      sk::groupnorm_forward(s, x.data(), gamma.data(), beta.data(), relu, y.data(), mean.data(), rstd.data(),
                            scratch.data());
      expect_close(y.data(), want.y, 1.0, who + " y");
      std::vector<float> dx(n), dgamma(s.channels), dbeta(s.channels);
      for (bool with_dx : {true, false}) {
        sk::groupnorm_backward(s, x.data(), relu ? y.data() : nullptr, dy.data(), gamma.data(), mean.data(),
                               rstd.data(), dgamma.data(), dbeta.data(), with_dx ? dx.data() : nullptr, scratch.data());
        expect_close(dgamma.data(), want.dgamma, std::sqrt(sums * s.batch), who + " dgamma");
        expect_close(dbeta.data(), want.dbeta, std::sqrt(sums * s.batch), who + " dbeta");
        if (with_dx) expect_close(dx.data(), want.dx, 10.0, who + " dx");
      }
    }
  }
  sp::force_isa(sp::detected_isa());
}

}  // namespace

BOOST_AUTO_TEST_CASE(groupnorm_matches_double_reference_on_every_isa) {
  std::mt19937 rng(21);
  const sk::NormShape shapes[] = {
      {1, 1, 10, 1},   // layer norm of one vector
      {3, 7, 6, 2},    // ragged positions, channels under a vector
      {2, 13, 24, 8},  // 3 channels a group
      {2, 49, 64, 8},  // resnet8's last stage
      {1, 30, 17, 17}, // instance norm, odd channel count
      {2, 5, 40, 4},   // channels over two vectors, ragged
  };
  for (const auto& s : shapes) check(s, rng);
}
