// Synchronous model averaging arithmetic against values computed by hand.
#define BOOST_TEST_MODULE learners_sma
#include <boost/test/unit_test.hpp>

#include "learners/sma.h"

#include <vector>

using namespace starling;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(learner_correction_moves_the_replica_toward_z) {
  float w[2] = {3.f, -1.f};
  const float z[2] = {1.f, 1.f};
  float c[2];
  sma::correct(w, z, c, 0.25f, 2);  // c = 0.25·(w − z) = (0.5, −0.5); w − c = (2.5, −0.5)
  BOOST_TEST(c[0] == 0.5f);
  BOOST_TEST(c[1] == -0.5f);
  BOOST_TEST(w[0] == 2.5f);
  BOOST_TEST(w[1] == -0.5f);
}

BOOST_AUTO_TEST_CASE(node_update_with_and_without_momentum) {
  const float c1[2] = {0.5f, -0.5f}, c2[2] = {0.25f, 1.f};
  const float* cs[2] = {c1, c2};
  float z[2] = {1.f, 2.f}, z_prev[2] = {0.f, 2.f};
  // z + μ(z − z_prev) + c1 + c2 with μ = 0.5: (1 + 0.5 + 0.75, 2 + 0 + 0.5) = (2.25, 2.5)
  sma::apply(z, z_prev, cs, 2, 0.5f, 2);
  BOOST_TEST(z[0] == 2.25f);
  BOOST_TEST(z[1] == 2.5f);
  BOOST_TEST(z_prev[0] == 1.f);  // the old z
  BOOST_TEST(z_prev[1] == 2.f);
  sma::apply(z, nullptr, cs, 2, 0.f, 2);  // no momentum: z + Σ c
  BOOST_TEST(z[0] == 3.f);
  BOOST_TEST(z[1] == 3.f);
}

BOOST_AUTO_TEST_CASE(one_round_of_k_learners_with_alpha_one_over_k_gives_the_mean) {
  // With α = 1/k and μ = 0, z after one round is the mean of the replicas.
  const int k = 4;
  const std::size_t n = 3000;  // spans several of apply()'s blocks
  std::vector<std::vector<float>> w(k, std::vector<float>(n)), c(k, std::vector<float>(n));
  std::vector<float> z(n, 1.f), mean(n, 0.f);
  for (int j = 0; j < k; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      w[j][i] = static_cast<float>(j * 7 + i % 13);
      mean[i] += w[j][i] / k;
    }
  std::vector<const float*> cs;
  for (int j = 0; j < k; ++j) {
    sma::correct(w[j].data(), z.data(), c[j].data(), 1.f / k, n);
    cs.push_back(c[j].data());
  }
  sma::apply(z.data(), nullptr, cs.data(), k, 0.f, n);
  for (std::size_t i = 0; i < n; i += 97) BOOST_TEST(z[i] == mean[i], tt::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(mean_of_vectors) {
  const float a[3] = {1.f, 2.f, 3.f}, b[3] = {3.f, 2.f, -3.f};
  const float* v[2] = {a, b};
  float out[3];
  sma::mean(v, 2, out, 3);
  BOOST_TEST(out[0] == 2.f);
  BOOST_TEST(out[1] == 2.f);
  BOOST_TEST(out[2] == 0.f);
}
