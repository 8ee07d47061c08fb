// Bandwidth-adaptive compression controller (pure logic): tightens while communication
// does not hide behind compute, relaxes when it is well under, never by more than 2× per
// adjustment nor more often than every `interval` rounds, and stays inside its clamps.
#define BOOST_TEST_MODULE adaptive_compression
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "gossip/algorithms/adaptive_compression.h"
#include "gossip/transport/error.h"

using namespace starling::gossip;

namespace {

AdaptiveCompressionOptions options(double initial, std::size_t interval) {
  AdaptiveCompressionOptions o;
  o.initial_density = initial;
  o.min_density = 1e-3;
  o.max_density = 0.5;
  o.margin = 0.1;
  o.relax_below = 0.5;
  o.interval = interval;
  return o;
}

// A link whose communication time is latency + density × full-vector transfer time.
struct Link {
  double latency = 0.0;
  double full = 1.0;  // seconds to send the dense vector
  double seconds(double density) const { return latency + density * full; }
};

// Runs `rounds` rounds and returns the densities used in each, checking the rate rules.
std::vector<double> simulate(AdaptiveCompression& c, double compute, const Link& link, int rounds,
                             std::size_t interval) {
  std::vector<double> used;
  int since_change = 0;
  for (int k = 0; k < rounds; ++k) {
    const double before = c.density();
    used.push_back(before);
    const DensityDecision d = c.observe(compute, link.seconds(before));
    ++since_change;
    BOOST_TEST(d.density == c.density());
    if (d.changed) {
      BOOST_TEST(!d.report.empty());
      BOOST_TEST(since_change >= static_cast<int>(interval), "changed after only " << since_change << " rounds");
      BOOST_TEST(d.density <= 2.0 * before * (1 + 1e-12));
      BOOST_TEST(d.density >= 0.5 * before * (1 - 1e-12));
      BOOST_TEST_MESSAGE(d.report);
      since_change = 0;
    } else {
      BOOST_TEST(d.report.empty());
      BOOST_TEST(d.density == before);
    }
    BOOST_TEST(d.density >= 1e-3);
    BOOST_TEST(d.density <= 0.5);
  }
  return used;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tightens_under_slow_communication_until_it_hides) {
  AdaptiveCompression c(options(0.5, 5));
  const Link slow{0.0, 1.0};  // dense: 1 s against 0.05 s of compute
  simulate(c, 0.05, slow, 60, 5);
  BOOST_TEST(c.density() < 0.5);
  BOOST_TEST(slow.seconds(c.density()) <= 0.05 * 0.9 * (1 + 1e-9));
  // Having arrived it stays put: within the band nothing changes.
  const std::uint64_t settled = c.adjustments();
  simulate(c, 0.05, slow, 40, 5);
  BOOST_TEST(c.adjustments() == settled);
}

BOOST_AUTO_TEST_CASE(relaxes_under_fast_communication_up_to_the_clamp) {
  AdaptiveCompression c(options(0.001, 3));
  const Link fast{0.0, 0.01};  // even dense is a fifth of compute
  const std::vector<double> used = simulate(c, 0.05, fast, 60, 3);
  BOOST_TEST(c.density() == 0.5);  // max_density
  // Never more than 2× at a time: from 1e-3 to 0.5 takes at least 9 doublings.
  BOOST_TEST(c.adjustments() >= 9u);
}

BOOST_AUTO_TEST_CASE(tightening_stops_at_min_density) {
  AdaptiveCompression c(options(0.01, 2));
  const Link slow{0.0, 100.0};  // bandwidth-bound: even the minimum density does not hide
  simulate(c, 0.05, slow, 40, 2);
  BOOST_TEST(c.density() == 1e-3);
  // Pinned at the clamp: no further changes and no further reports.
  const std::uint64_t pinned = c.adjustments();
  const DensityDecision d = c.observe(0.05, 10.0);
  BOOST_TEST(!d.changed);
  BOOST_TEST(c.adjustments() == pinned);
}

BOOST_AUTO_TEST_CASE(a_latency_bound_link_keeps_its_density) {
  AdaptiveCompression c(options(0.01, 2));
  const Link hopeless{0.2, 1.0};  // latency alone exceeds compute: fewer bytes buy nothing
  simulate(c, 0.05, hopeless, 40, 2);
  BOOST_TEST(c.density() == 0.01);   // the one tightening was undone
  BOOST_TEST(c.adjustments() == 2u);  // tighten, undo, and never again
}

BOOST_AUTO_TEST_CASE(no_change_before_interval_rounds) {
  AdaptiveCompression c(options(0.1, 10));
  for (int k = 0; k < 9; ++k) BOOST_TEST(!c.observe(0.01, 5.0).changed);
  const DensityDecision d = c.observe(0.01, 5.0);
  BOOST_TEST(d.changed);
  BOOST_TEST(d.density == 0.05);  // halved: the target is far below, 2× is the limit
  // The window starts afresh after a change.
  for (int k = 0; k < 9; ++k) BOOST_TEST(!c.observe(0.01, 5.0).changed);
  BOOST_TEST(c.observe(0.01, 5.0).changed);
}

BOOST_AUTO_TEST_CASE(mild_excess_tightens_proportionally) {
  AdaptiveCompression c(options(0.2, 1));
  // target = 1.0 × 0.9 = 0.9; comm 1.2 → × 0.75.
  const DensityDecision d = c.observe(1.0, 1.2);
  BOOST_TEST(d.changed);
  BOOST_TEST(std::abs(d.density - 0.15) < 1e-12);
}

BOOST_AUTO_TEST_CASE(ignores_bad_measurements) {
  AdaptiveCompression c(options(0.1, 1));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_TEST(!c.observe(nan, 1.0).changed);
  BOOST_TEST(!c.observe(1.0, -1.0).changed);
  BOOST_TEST(!c.observe(std::numeric_limits<double>::infinity(), 1.0).changed);
  BOOST_TEST(c.ignored() == 3u);
  BOOST_TEST(c.rounds() == 0u);
  BOOST_TEST(c.density() == 0.1);
}

BOOST_AUTO_TEST_CASE(rejects_bad_options) {
  AdaptiveCompressionOptions o;
  o.min_density = 0.0;
  BOOST_CHECK_THROW(AdaptiveCompression{o}, InvalidArgument);
  o = {};
  o.min_density = 0.5;
  o.max_density = 0.1;
  BOOST_CHECK_THROW(AdaptiveCompression{o}, InvalidArgument);
  o = {};
  o.margin = 1.0;
  BOOST_CHECK_THROW(AdaptiveCompression{o}, InvalidArgument);
  o = {};
  o.interval = 0;
  BOOST_CHECK_THROW(AdaptiveCompression{o}, InvalidArgument);
  o = {};
  o.initial_density = 5.0;  // clamped, not rejected
  BOOST_TEST(AdaptiveCompression{o}.density() == 1.0);
}
