// Synchronous model averaging arithmetic against values computed by hand; a round in the
// node's shares and the learners' own rounds (SmaGroup) on real threads against the same
// round run in one pass or one slice after another.
#define BOOST_TEST_MODULE learners_sma
#include <boost/test/unit_test.hpp>

#include "learners/replicas/sma.h"
#include "learners/replicas/sma_group.h"

#include <chrono>
#include <cmath>
#include <future>
#include <thread>
#include <vector>

using namespace starling;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_CASE(one_round_by_hand) {
  // α = 0.25: c1 = 0.25·(w1 − z) = (0.5, −0.5), c2 = 0.25·(w2 − z) = (0.25, 1)
  float w1[2] = {3.f, 0.f}, w2[2] = {2.f, 6.f};
  float* replicas[2] = {w1, w2};
  float z[2] = {1.f, 2.f}, z_prev[2] = {0.f, 2.f};
  sma::average_slice(z, z_prev, replicas, 2, 0.25f, 0.5f, 0, 2);
  BOOST_TEST(w1[0] == 2.5f);  // w − c
  BOOST_TEST(w1[1] == 0.5f);
  BOOST_TEST(w2[0] == 1.75f);
  BOOST_TEST(w2[1] == 5.f);
  // z + μ(z − z_prev) + c1 + c2 with μ = 0.5: (1 + 0.5 + 0.75, 2 + 0 + 0.5)
  BOOST_TEST(z[0] == 2.25f);
  BOOST_TEST(z[1] == 2.5f);
  BOOST_TEST(z_prev[0] == 1.f);  // the old z
  BOOST_TEST(z_prev[1] == 2.f);
}

BOOST_AUTO_TEST_CASE(slices_in_any_order_equal_one_pass) {
  const std::size_t n = 5003;  // several blocks and a ragged end
  const int k = 3;
  std::vector<std::vector<float>> a(k, std::vector<float>(n)), b;
  std::vector<float> za(n), zpa(n), zb, zpb;
  for (std::size_t i = 0; i < n; ++i) {
    za[i] = std::sin(0.01f * i), zpa[i] = std::cos(0.02f * i);
    for (int j = 0; j < k; ++j) a[j][i] = za[i] + 0.1f * static_cast<float>(j + 1) * std::cos(0.3f * i);
  }
  b = a, zb = za, zpb = zpa;
  std::vector<float*> ra, rb;
  for (int j = 0; j < k; ++j) ra.push_back(a[j].data()), rb.push_back(b[j].data());
  sma::average_slice(za.data(), zpa.data(), ra.data(), k, 1.f / k, 0.9f, 0, n);
  for (int part = 4; part-- > 0;)  // the last slice first
    sma::average_slice(zb.data(), zpb.data(), rb.data(), k, 1.f / k, 0.9f, sma::slice_bound(n, 4, part),
                       sma::slice_bound(n, 4, part + 1));
  BOOST_TEST(za == zb, tt::per_element());
  BOOST_TEST(a[2] == b[2], tt::per_element());
  BOOST_TEST(sma::slice_bound(n, 4, 0) == 0u);
  BOOST_TEST(sma::slice_bound(n, 4, 1) % 16 == 0u);
  BOOST_TEST(sma::slice_bound(n, 4, 4) == n);
}

// The node's form of a round: one share per replica, covering [0, n) between them, run in
// any order, equals one pass; α defaults to 1/k.
BOOST_AUTO_TEST_CASE(a_round_in_shares_equals_one_pass) {
  const std::size_t n = 1001;
  const int k = 3;
  std::vector<std::vector<float>> a(k, std::vector<float>(n));
  std::vector<float> za(n), zpa(n, 0.5f);
  for (std::size_t i = 0; i < n; ++i) {
    za[i] = std::sin(0.01f * i);
    for (int j = 0; j < k; ++j) a[j][i] = za[i] + 0.1f * static_cast<float>(j + 1) * std::cos(0.3f * i);
  }
  auto b = a;
  auto zb = za, zpb = zpa;
  std::vector<float*> ra, rb;
  for (int j = 0; j < k; ++j) ra.push_back(a[j].data()), rb.push_back(b[j].data());
  BOOST_TEST(sma::alpha_for(0.0, k) == 1.f / k);
  BOOST_TEST(sma::alpha_for(0.25, k) == 0.25f);
  sma::average_slice(za.data(), zpa.data(), ra.data(), k, sma::alpha_for(0.0, k), 0.5f, 0, n);
  const auto shares = sma::slices(zb.data(), zpb.data(), rb, n, sma::alpha_for(0.0, k), 0.5f);
  BOOST_REQUIRE(shares.size() == static_cast<std::size_t>(k));
  BOOST_TEST(shares.front().lo == 0u);
  BOOST_TEST(shares.back().hi == n);
  for (int j = 1; j < k; ++j) BOOST_TEST(shares[j].lo == shares[j - 1].hi);
  for (int j = k; j-- > 0;) sma::average(shares[j]);
  BOOST_TEST(za == zb, tt::per_element());
  BOOST_TEST(zpa == zpb, tt::per_element());
  BOOST_TEST(a[1] == b[1], tt::per_element());
}

BOOST_AUTO_TEST_CASE(alpha_one_over_k_moves_z_to_the_mean) {
  // With α = 1/k and μ = 0, z after one round is the mean of the replicas.
  const int k = 4;
  const std::size_t n = 3000;
  std::vector<std::vector<float>> w(k, std::vector<float>(n));
  std::vector<float> z(n, 1.f), mean(n, 0.f);
  std::vector<float*> replicas;
  for (int j = 0; j < k; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      w[j][i] = static_cast<float>(j * 7 + i % 13);
      mean[i] += w[j][i] / k;
    }
    replicas.push_back(w[j].data());
  }
  sma::average_slice(z.data(), nullptr, replicas.data(), k, 1.f / k, 0.f, 0, n);
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

BOOST_AUTO_TEST_CASE(relative_distance_by_hand) {
  const float a[2] = {3.f, 4.f}, b[2] = {0.f, 8.f}, zero[2] = {0.f, 0.f};
  BOOST_TEST(sma::relative_distance(a, b, 2) == 5.0 / 8.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(sma::relative_distance(b, b, 2) == 0.0);
  BOOST_TEST(sma::relative_distance(a, zero, 2) == 0.0);
}

namespace {

// A learner's "step" between rounds: moves its replica by something that depends on the
// learner, the round and the element, so a slice averaged too early or twice shows.
void fake_step(std::vector<float>& w, int learner, int round) {
  for (std::size_t i = 0; i < w.size(); ++i) w[i] += 0.01f * static_cast<float>((learner + 1) * (round + 2)) + 1e-3f * static_cast<float>(i % 7);
}

}  // namespace

BOOST_AUTO_TEST_CASE(group_rounds_on_threads_equal_sequential_rounds) {
  const std::size_t n = 1003;  // not a multiple of any slice alignment
  const int k = 3, rounds = 25;
  std::vector<std::vector<float>> w(k, std::vector<float>(n)), w_seq;
  for (int j = 0; j < k; ++j)
    for (std::size_t i = 0; i < n; ++i) w[j][i] = std::sin(static_cast<float>(i * (j + 1)));
  w_seq = w;
  std::vector<float> z(n, 0.5f), z_prev(n, 0.25f), z_seq = z, z_prev_seq = z_prev;

  for (int r = 0; r < rounds; ++r) {
    std::vector<float*> replicas;
    for (int j = 0; j < k; ++j) fake_step(w_seq[j], j, r), replicas.push_back(w_seq[j].data());
    sma::average_slice(z_seq.data(), z_prev_seq.data(), replicas.data(), k, 0.3f, 0.5f, 0, n);
  }

  sma::SmaGroup group(z.data(), z_prev.data(), k, n, 0.3f, 0.5f);
  std::vector<std::thread> threads;
  std::vector<int> completed(k, 0);
  for (int j = 0; j < k; ++j)
    threads.emplace_back([&, j] {
      for (int r = 0; r < rounds; ++r) {
        fake_step(w[j], j, r);
        if (!group.round(j, w[j].data())) return;
        ++completed[j];
      }
    });
  for (auto& t : threads) t.join();
  for (int j = 0; j < k; ++j) {
    BOOST_TEST(completed[j] == rounds);
    BOOST_TEST(w[j] == w_seq[j], tt::per_element());
  }
  BOOST_TEST(z == z_seq, tt::per_element());
  BOOST_TEST(z_prev == z_prev_seq, tt::per_element());
}

BOOST_AUTO_TEST_CASE(abort_releases_a_waiting_member_with_the_reason) {
  std::vector<float> z(64, 0.f), w0(64, 1.f);
  sma::SmaGroup group(z.data(), nullptr, 2, z.size(), 0.5f, 0.f);
  // Member 1 never comes: member 0 would wait for ever without abort().
  auto waiting = std::async(std::launch::async, [&] { return group.round(0, w0.data()); });
  BOOST_TEST((waiting.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout));
  group.abort("learner 1: loss is not finite");
  BOOST_REQUIRE((waiting.wait_for(std::chrono::seconds(10)) == std::future_status::ready));
  BOOST_TEST(!waiting.get());
  BOOST_TEST(group.why() == "learner 1: loss is not finite");
  BOOST_TEST(!group.round(0, w0.data()));  // and every later round
  BOOST_TEST(w0[0] == 1.f);                // nothing averaged
}

BOOST_AUTO_TEST_CASE(round_times_add_each_members_averaging_and_waits) {
  const std::size_t n = 1 << 16;
  std::vector<float> z(n, 0.f);
  std::vector<std::vector<float>> w(2, std::vector<float>(n, 1.f));
  sma::SmaGroup group(z.data(), nullptr, 2, n, 0.5f, 0.f);
  std::vector<sma::RoundTimes> times(2);
  std::vector<double> after_one(2);
  std::vector<std::thread> threads;
  for (int j = 0; j < 2; ++j)
    threads.emplace_back([&, j] {
      group.round(j, w[j].data(), &times[j]);
      after_one[j] = times[j].averaging;
      group.round(j, w[j].data(), &times[j]);
    });
  for (auto& t : threads) t.join();
  for (int j = 0; j < 2; ++j) {
    BOOST_TEST(after_one[j] > 0.0);  // a slice of 32k floats takes µs, never nothing
    BOOST_TEST(times[j].averaging > after_one[j]);  // added to, not overwritten
    BOOST_TEST(times[j].waiting >= 0.0);
  }
  // Both rounds ran: z = 0 + 2·½(1 − 0) = 1 and w = ½, then z = 1 + 2·½(½ − 1) = ½ and w = ¾.
  BOOST_TEST(z[n - 1] == 0.5f);
  BOOST_TEST(w[0][0] == 0.75f);
}
