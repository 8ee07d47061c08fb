// The fused attention core (kernels/attention.h) against a double-precision reference on
// every ISA path this CPU supports, on ragged shapes: sequence lengths and head widths below,
// at and past each build's vectors and tiles, one head of two inside fused [q | k | v] rows,
// whose other head's columns the kernels must leave alone.
#define BOOST_TEST_MODULE kernels_attention
#include <boost/test/unit_test.hpp>

#include "kernels/attention.h"
#include "platform/cpu_features.h"
#include "tests/isa_paths.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;

namespace {

constexpr float kSentinel = 12345.f;  // what the other head's columns hold and must keep

using Matrix = std::vector<std::vector<double>>;

Matrix zeros(int rows, int cols) { return Matrix(rows, std::vector<double>(cols, 0.0)); }

// One head's forward and backward in double: P, O, dQ, dK, dV.
struct Reference {
  Matrix p, out, dq, dk, dv;
};

Reference reference(int t, int d, double scale, const float* q, const float* k, const float* v, long ld,
                    const float* d_out, long ld_out) {
  Reference r{zeros(t, t), zeros(t, d), zeros(t, d), zeros(t, d), zeros(t, d)};
  for (int i = 0; i < t; ++i) {
    std::vector<double> s(i + 1);
    double top = -1e300, sum = 0.0;
    for (int j = 0; j <= i; ++j) {
      for (int c = 0; c < d; ++c) s[j] += static_cast<double>(q[i * ld + c]) * k[j * ld + c];
      top = std::max(top, scale * s[j]);
    }
    for (int j = 0; j <= i; ++j) sum += std::exp(scale * s[j] - top);
    for (int j = 0; j <= i; ++j) r.p[i][j] = std::exp(scale * s[j] - top) / sum;
    for (int j = 0; j <= i; ++j)
      for (int c = 0; c < d; ++c) r.out[i][c] += r.p[i][j] * v[j * ld + c];
    // dP = dO·Vᵀ, dS = scale·P·(dP − Σ P·dP), then dQ = dS·K, dK = dSᵀ·Q, dV = Pᵀ·dO.
    std::vector<double> dp(i + 1);
    double dot = 0.0;
    for (int j = 0; j <= i; ++j) {
      for (int c = 0; c < d; ++c) dp[j] += static_cast<double>(d_out[i * ld_out + c]) * v[j * ld + c];
      dot += r.p[i][j] * dp[j];
    }
    for (int j = 0; j <= i; ++j) {
      const double ds = scale * r.p[i][j] * (dp[j] - dot);
      for (int c = 0; c < d; ++c) {
        r.dq[i][c] += ds * k[j * ld + c];
        r.dk[j][c] += ds * q[i * ld + c];
        r.dv[j][c] += r.p[i][j] * d_out[i * ld_out + c];
      }
    }
  }
  return r;
}

// |got − want| within a relative bound on the sum of the terms' sizes, `size`.
void check_close(const char* what, int i, int c, float got, double want, double size) {
  BOOST_TEST(std::abs(got - want) <= 2e-5 * size + 1e-6, what << "[" << i << "," << c << "] = " << got << ", want " << want);
}

// Head 1 of two inside fused rows (3 heads' widths of q, k, v, then padding), so that the
// strides are those of the attention layer and head 0 surrounds it.
void check_shape(int t, int d, std::mt19937& rng) {
  const int heads = 2, width = heads * d, h = 1;
  const long ld = 3 * width + 3, ld_out = width + 1;
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> qkv(static_cast<std::size_t>(t) * ld), d_out(static_cast<std::size_t>(t) * ld_out);
  for (float& x : qkv) x = 2.f * normal(rng);  // scores of a few units: softmax rows far from uniform
  for (float& x : d_out) x = normal(rng);
  sk::AttentionHead head;
  head.t = t, head.d = d, head.scale = 1.f / std::sqrt(static_cast<float>(d));
  head.q = qkv.data() + h * d, head.k = head.q + width, head.v = head.q + 2 * width;
  head.ld = ld, head.ld_out = ld_out;
  const Reference want = reference(t, d, head.scale, head.q, head.k, head.v, ld, d_out.data() + h * d, ld_out);
  double q_size = 0.0;
  for (float x : qkv) q_size = std::max(q_size, static_cast<double>(std::abs(x)));

  for (sp::Isa isa : starling::testing::supported_isas()) {
    sp::force_isa(isa);
    BOOST_TEST_CONTEXT("isa " << sp::isa_name(isa) << ", t " << t << ", d " << d) {
      std::vector<float> p(static_cast<std::size_t>(t) * t, std::nanf("")), out(d_out.size(), kSentinel);
      std::vector<float> grads(qkv.size(), kSentinel), ds(p.size()), scratch(static_cast<std::size_t>(d) * t);
      sk::attention_forward(head, p.data(), out.data() + h * d, scratch.data());
      float* dq = grads.data() + h * d;
      sk::attention_backward(head, p.data(), d_out.data() + h * d, dq, dq + width, dq + 2 * width, ds.data(),
                             scratch.data());
      for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) check_close("P", i, j, p[i * t + j], want.p[i][j], 1.0);
        for (int c = 0; c < d; ++c) {
          check_close("O", i, c, out[i * ld_out + h * d + c], want.out[i][c], q_size);
          check_close("dQ", i, c, dq[i * ld + c], want.dq[i][c], q_size * d);
          check_close("dK", i, c, dq[i * ld + width + c], want.dk[i][c], q_size * d);
          check_close("dV", i, c, dq[i * ld + 2 * width + c], want.dv[i][c], t);
        }
      }
      const auto untouched = [](const std::vector<float>& v, std::size_t count) {
        return std::count(v.begin(), v.end(), kSentinel) == static_cast<long>(count);
      };
      BOOST_TEST(untouched(out, out.size() - static_cast<std::size_t>(t) * d));
      BOOST_TEST(untouched(grads, grads.size() - 3 * static_cast<std::size_t>(t) * d));
    }
  }
  sp::force_isa(sp::detected_isa());
}

}  // namespace

BOOST_AUTO_TEST_CASE(fused_attention_matches_double_reference) {
  std::mt19937 rng(3);
  for (int t : {1, 3, 7, 16, 33, 64, 70})
    for (int d : {1, 5, 8, 32, 40}) check_shape(t, d, rng);
}
