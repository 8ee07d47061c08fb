// Robust aggregation's arithmetic (gossip/algorithms/robust_aggregation.h) on every ISA path
// this CPU has, against a double-precision reference written the obvious way: distances,
// self-centred clipping (fixed and adaptive radius), coordinate-wise trimmed mean and
// median, on random sizes with ragged ends and random neighbour counts. The ISA paths must
// also agree bit for bit (no fused multiply-adds, the same lane order).
#define BOOST_TEST_MODULE robust_aggregation
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gossip/algorithms/robust_aggregation.h"
#include "gossip/algorithms/robust_kernels.h"
#include "platform/cpu_features.h"

namespace g = starling::gossip;
namespace sp = starling::platform;

namespace {

struct Case {
  std::vector<float> own;
  std::vector<std::vector<float>> neighbours;
  std::vector<double> weights;
};

// A peer's model and `count` neighbours' at various distances (some far, as attackers are).
Case random_case(std::mt19937& rng, std::size_t n, int count) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Case c;
  for (std::size_t i = 0; i < n; ++i) c.own.push_back(normal(rng));
  for (int j = 0; j < count; ++j) {
    const float spread = j % 3 == 2 ? 30.0f : 0.3f * static_cast<float>(j + 1);
    std::vector<float> v = c.own;
    for (float& x : v) x += spread * normal(rng);
    c.neighbours.push_back(std::move(v));
    c.weights.push_back(1.0 / (count + 1));
  }
  return c;
}

std::vector<g::NeighbourVector> views(const Case& c) {
  std::vector<g::NeighbourVector> out;
  for (std::size_t j = 0; j < c.neighbours.size(); ++j) out.push_back({c.neighbours[j].data(), c.weights[j]});
  return out;
}

double ref_distance(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s);
}

std::vector<double> ref_clipped(const Case& c, double fixed_tau) {
  std::vector<double> d;
  for (const auto& v : c.neighbours) d.push_back(ref_distance(c.own, v));
  double tau = fixed_tau;
  if (tau == 0.0) {
    std::vector<double> sorted = d;
    std::sort(sorted.begin(), sorted.end());
    tau = sorted.size() >= 2 ? sorted[sorted.size() - 2] : sorted.back();
  }
  std::vector<double> x(c.own.begin(), c.own.end());
  for (std::size_t j = 0; j < c.neighbours.size(); ++j) {
    const double scale = std::min(1.0, tau / d[j]);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += c.weights[j] * scale * (double(c.neighbours[j][i]) - c.own[i]);
  }
  return x;
}

std::vector<double> ref_trimmed(const Case& c, std::size_t trim) {
  std::vector<double> x(c.own.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::vector<double> column{c.own[i]};
    for (const auto& v : c.neighbours) column.push_back(v[i]);
    std::sort(column.begin(), column.end());
    double sum = 0.0;
    for (std::size_t k = trim; k < column.size() - trim; ++k) sum += column[k];
    x[i] = sum / static_cast<double>(column.size() - 2 * trim);
  }
  return x;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double scale) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  BOOST_TEST(worst <= 1e-5 * scale, "worst error " << worst << " at scale " << scale);
}

std::vector<sp::Isa> isas() {
  std::vector<sp::Isa> out{sp::Isa::scalar};
  if (sp::detected_isa() >= sp::Isa::avx2) out.push_back(sp::Isa::avx2);
  if (sp::detected_isa() >= sp::Isa::avx512) out.push_back(sp::Isa::avx512);
  return out;
}

// Sizes around the kernels' widths (16 lanes, blocks of 1024) and random ones.
std::vector<std::size_t> sizes(std::mt19937& rng) {
  std::vector<std::size_t> out{1, 7, 15, 16, 17, 31, 1023, 1024, 1025, 3000};
  std::uniform_int_distribution<std::size_t> any(1, 5000);
  for (int k = 0; k < 6; ++k) out.push_back(any(rng));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(distances_match_double_precision) {
  for (sp::Isa isa : isas()) {
    sp::force_isa(isa);
    std::mt19937 rng(1);
    for (std::size_t n : sizes(rng)) {
      const Case c = random_case(rng, n, 3);
      for (const auto& v : c.neighbours) {
        const double want = ref_distance(c.own, v);
        BOOST_TEST(std::abs(g::distance(c.own, v.data()) - want) <= 1e-5 * want);
      }
    }
  }
  sp::force_isa(sp::detected_isa());
}

BOOST_AUTO_TEST_CASE(clipping_matches_double_precision_fixed_and_adaptive) {
  for (sp::Isa isa : isas()) {
    sp::force_isa(isa);
    std::mt19937 rng(2);
    for (std::size_t n : sizes(rng))
      for (int count : {1, 2, 4, 7})
        for (double tau : {0.0, 5.0, 1e9}) {
          const Case c = random_case(rng, n, count);
          std::vector<float> x = c.own;
          g::AggregatorSpec spec{g::Aggregator::clipped, tau, 1};
          const auto samples = g::robust_mix(spec, x, views(c));
          expect_close(x, ref_clipped(c, tau), 10.0);
          BOOST_REQUIRE_EQUAL(samples.size(), c.neighbours.size());
          const double radius = tau == 0.0 ? g::clip_radius(spec, [&] {
            std::vector<double> d;
            for (const auto& s : samples) d.push_back(s.distance);
            return d;
          }()) : tau;
          for (std::size_t j = 0; j < samples.size(); ++j) {
            const double want = ref_distance(c.own, c.neighbours[j]);
            BOOST_TEST(std::abs(samples[j].distance - want) <= 1e-5 * want);
            BOOST_TEST(samples[j].clipped == (samples[j].distance > radius));
          }
        }
  }
  sp::force_isa(sp::detected_isa());
}

BOOST_AUTO_TEST_CASE(trimmed_mean_and_median_match_double_precision) {
  for (sp::Isa isa : isas()) {
    sp::force_isa(isa);
    std::mt19937 rng(3);
    for (std::size_t n : sizes(rng))
      for (int count : {1, 2, 3, 4, 8, 16}) {
        const Case c = random_case(rng, n, count);
        for (int trim = 1; 2 * trim < count + 1; ++trim) {
          std::vector<float> x = c.own;
          g::robust_mix({g::Aggregator::trimmed_mean, 0.0, trim}, x, views(c));
          expect_close(x, ref_trimmed(c, static_cast<std::size_t>(trim)), 30.0);
        }
        std::vector<float> x = c.own;
        g::robust_mix({g::Aggregator::median, 0.0, 1}, x, views(c));
        expect_close(x, ref_trimmed(c, static_cast<std::size_t>(count / 2)), 30.0);  // the middle one or two
      }
  }
  sp::force_isa(sp::detected_isa());
}

// A view that lost neighbours to deaths may leave a trim too large: it becomes the median.
BOOST_AUTO_TEST_CASE(a_trim_that_would_leave_nothing_is_the_median) {
  std::mt19937 rng(4);
  const Case c = random_case(rng, 10, 2);
  std::vector<float> x = c.own;
  g::robust_mix({g::Aggregator::trimmed_mean, 0.0, 2}, x, views(c));
  expect_close(x, ref_trimmed(c, 1), 30.0);
}

BOOST_AUTO_TEST_CASE(isa_paths_agree_bit_for_bit) {
  std::mt19937 rng(5);
  const Case c = random_case(rng, 2049, 5);
  std::vector<std::vector<float>> results;
  for (sp::Isa isa : isas()) {
    sp::force_isa(isa);
    for (g::Aggregator kind : {g::Aggregator::clipped, g::Aggregator::trimmed_mean, g::Aggregator::median}) {
      std::vector<float> x = c.own;
      g::robust_mix({kind, 0.0, 1}, x, views(c));
      results.push_back(std::move(x));
    }
  }
  sp::force_isa(sp::detected_isa());
  for (std::size_t k = 3; k < results.size(); ++k) BOOST_TEST(results[k] == results[k % 3], boost::test_tools::per_element());
}
