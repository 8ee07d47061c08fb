// Ring all-reduce on real sockets, every peer a thread: the result is the mean (fp32
// tolerance against a double reference) and bit-identical on all peers, for p = 1..5
// (and 8, 16), sizes that do not divide evenly (including N < p), one or many segments.
#define BOOST_TEST_MODULE gossip_allreduce_ring
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gossip/allreduce_ring.h"
#include "gossip/error.h"
#include "peer_group.h"

using namespace starling::gossip;
using starling::gossip::testing::PeerGroup;
namespace data = boost::unit_test::data;

namespace {

std::vector<float> input_of(int rank, std::size_t n) {
  std::mt19937 rng(1000 + rank);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Runs `runs` all-reduces on every peer and checks mean and bit-identity after the first.
void check_allreduce(PeerGroup& group, std::size_t n, std::size_t segment_bytes, int runs) {
  const int p = group.size();
  std::vector<std::vector<float>> results(p);
  group.run_all([&](int r) {
    results[r] = input_of(r, n);
    AllreduceOptions o;
    o.segment_bytes = segment_bytes;
    o.timeout = std::chrono::seconds(10);
    AllreduceRing ring(group.at(r), group.ids(), results[r], o);
    for (int i = 0; i < runs; ++i) ring.run();
  });
  std::vector<std::vector<float>> inputs;
  for (int r = 0; r < p; ++r) inputs.push_back(input_of(r, n));
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0, magnitude = 0.0;
    for (int r = 0; r < p; ++r) {
      const double x = inputs[r][i];
      sum += x;
      magnitude += std::abs(x);
    }
    const double err = std::abs(results[0][i] - sum / p);
    if (err > 1e-6 * magnitude + 1e-6) {
      BOOST_ERROR("element " << i << ": " << results[0][i] << " vs mean " << sum / p);
      break;
    }
  }
  for (int r = 1; r < p; ++r)
    BOOST_TEST(std::memcmp(results[r].data(), results[0].data(), n * sizeof(float)) == 0,
               "peer " << r << " differs from peer 0 (p=" << p << ", n=" << n << ")");
}

}  // namespace

BOOST_DATA_TEST_CASE(mean_and_identical_bits, data::make({1, 2, 3, 4, 5}), p) {
  PeerGroup group(p);
  group.connect_ring();
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{100003}}) {
    BOOST_TEST_CONTEXT("p=" << p << " n=" << n) {
      check_allreduce(group, n, 256 * 1024, 1);
      check_allreduce(group, n, 1000, 1);  // many odd-sized segments: deep pipelining
    }
  }
}

BOOST_DATA_TEST_CASE(larger_rings, data::make({8, 16}), p) {
  PeerGroup group(p);
  group.connect_ring();
  check_allreduce(group, 1000, 256, 1);
  check_allreduce(group, 5, 256 * 1024, 1);
}

BOOST_AUTO_TEST_CASE(repeated_runs_stay_in_step) {
  PeerGroup group(3);
  group.connect_ring();
  // The mean of identical vectors is the vector again, up to rounding in (x+x+x)/3.
  check_allreduce(group, 4099, 1024, 5);
}

BOOST_AUTO_TEST_CASE(a_missing_peer_ends_in_a_timeout) {
  PeerGroup group(2);
  group.connect_ring();
  std::vector<float> v(100, 1.0f);
  AllreduceOptions o;
  o.timeout = std::chrono::milliseconds(200);
  AllreduceRing ring(group.at(0), group.ids(), v, o);
  BOOST_CHECK_THROW(ring.run(), TimeoutError);
}

BOOST_AUTO_TEST_CASE(bad_setup_is_rejected) {
  PeerGroup group(2);
  std::vector<float> v(10);
  BOOST_CHECK_THROW(AllreduceRing(group.at(0), {1, 2}, v), InvalidArgument);  // self missing
  BOOST_CHECK_THROW(AllreduceRing(group.at(0), {0, 0}, v), InvalidArgument);  // duplicate
  BOOST_CHECK_THROW(AllreduceRing(group.at(0), {0, 1}, v), InvalidArgument);  // not connected
}
