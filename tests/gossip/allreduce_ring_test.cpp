// Ring all-reduce on real sockets, every peer a thread: the result is the mean (fp32
// tolerance against a double reference) and bit-identical on all peers, for p = 1..5
// (and 8, 16), sizes that do not divide evenly (including N < p), one or many segments.
// With a 16-bit wire (fp16, bf16): within the format's rounding of the mean, still
// bit-identical, the rounding errors all in the residual, half the bytes, and a segment
// with a non-finite value dropped and counted.
#define BOOST_TEST_MODULE gossip_allreduce_ring
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <random>
#include <vector>

#include "gossip/algorithms/allreduce_ring.h"
#include "gossip/transport/error.h"
#include "peer_group.h"
#include "protocols/codec_row.h"

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

namespace {

namespace protocols = starling::protocols;

// Half a unit in the last place, relative: the bound on one rounding to the format.
double unit_roundoff(protocols::CodecId wire) {
  return protocols::codec_name(wire) == "fp16" ? 0x1p-11 : 0x1p-8;
}

struct Sixteen {
  std::vector<std::vector<float>> results, residuals;
  std::vector<std::uint64_t> bytes_sent;
};

Sixteen run_sixteen(PeerGroup& group, std::size_t n, std::size_t segment_bytes, protocols::CodecId wire) {
  const int p = group.size();
  Sixteen out{std::vector<std::vector<float>>(p), std::vector<std::vector<float>>(p), std::vector<std::uint64_t>(p)};
  std::vector<std::uint64_t> before(p);
  for (int r = 0; r < p; ++r) before[r] = group.bytes_received((r + 1) % p, r);
  group.run_all([&](int r) {
    out.results[r] = input_of(r, n);
    out.residuals[r].assign(n, 0.0f);
    AllreduceOptions o;
    o.segment_bytes = segment_bytes;
    o.timeout = std::chrono::seconds(10);
    o.wire = wire;
    AllreduceRing ring(group.at(r), group.ids(), out.results[r], o);
    ring.run(out.residuals[r]);
  });
  for (int r = 0; r < p; ++r) out.bytes_sent[r] = group.bytes_received((r + 1) % p, r) - before[r];
  return out;
}

}  // namespace

BOOST_DATA_TEST_CASE(sixteen_bit_wire_rounds_once_per_hop_and_stays_identical,
                     data::make({2, 3, 4}) * data::make({1, 2}), p, wire_code) {
  const auto wire = static_cast<protocols::CodecId>(wire_code);
  const double u = unit_roundoff(wire);
  PeerGroup group(p);
  group.connect_ring();
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{10007}}) {
    BOOST_TEST_CONTEXT("p=" << p << " wire=" << protocols::codec_name(wire) << " n=" << n) {
      const Sixteen s = run_sixteen(group, n, 1000, wire);
      for (int r = 1; r < p; ++r)
        BOOST_TEST(std::memcmp(s.results[r].data(), s.results[0].data(), n * sizeof(float)) == 0,
                   "peer " << r << " differs from peer 0");
      std::vector<std::vector<float>> inputs;
      for (int r = 0; r < p; ++r) inputs.push_back(input_of(r, n));
      double worst = 0.0, worst_kept = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        double sum = 0.0, magnitude = 0.0, left_out = 0.0;
        for (int r = 0; r < p; ++r) {
          sum += inputs[r][i];
          magnitude += std::abs(inputs[r][i]);
          left_out += s.residuals[r][i];
        }
        // p−1 rounded partial sums and one rounded mean: at most u·Σ|x| away from the mean.
        worst = std::max(worst, std::abs(s.results[0][i] - sum / p) / (u * magnitude + 1e-30));
        // Whatever rounding took is in the residuals: mean = result + Σ residual / p.
        worst_kept = std::max(worst_kept, std::abs(s.results[0][i] + left_out / p - sum / p) / (magnitude + 1e-30));
      }
      BOOST_TEST(worst <= 1.0);
      BOOST_TEST(worst_kept <= 1e-6);
    }
  }
}

BOOST_AUTO_TEST_CASE(sixteen_bit_wire_halves_the_bytes) {
  PeerGroup group(4);
  group.connect_ring();
  const std::size_t n = 100003;
  const Sixteen dense = run_sixteen(group, n, 64 * 1024, protocols::CodecId::none);
  const Sixteen half = run_sixteen(group, n, 64 * 1024, protocols::codec_row("fp16")->id);
  const Sixteen brain = run_sixteen(group, n, 64 * 1024, protocols::codec_row("bf16")->id);
  const double ratio = static_cast<double>(half.bytes_sent[0]) / static_cast<double>(dense.bytes_sent[0]);
  BOOST_TEST_MESSAGE("ring all-reduce p=4 n=" << n << ": fp32 " << dense.bytes_sent[0] << " bytes, fp16 "
                                              << half.bytes_sent[0] << " (" << ratio << "x), bf16 "
                                              << brain.bytes_sent[0]);
  BOOST_TEST(ratio > 0.49);
  BOOST_TEST(ratio < 0.51);
  BOOST_TEST(brain.bytes_sent[0] == half.bytes_sent[0]);
  for (float x : dense.residuals[0]) BOOST_TEST_REQUIRE(x == 0.0f);  // fp32 loses nothing
}

BOOST_AUTO_TEST_CASE(a_non_finite_sixteen_bit_segment_is_dropped) {
  PeerGroup group(2);
  group.connect_ring();
  const std::size_t n = 10;
  // Peer 1 first receives chunk 0 (elements 0..4) from peer 0: send it one of infinities.
  std::vector<std::uint8_t> payload{static_cast<std::uint8_t>(protocols::codec_row("fp16")->id), 0, 0, 0, 5, 0, 0, 0};
  for (int i = 0; i < 5; ++i) payload.insert(payload.end(), {0x00, 0x7C});
  protocols::FrameHeader h;
  h.type = protocols::MessageType::allreduce_segment;
  h.codec = protocols::codec_row("fp16")->id;
  h.tensor_length = 5;
  group.at(0).send(1, h, protocols::ByteSpan(payload.data(), payload.size()));
  std::vector<std::map<std::string, std::uint64_t>> drops(2);
  std::vector<std::vector<float>> results(2);
  group.run_all([&](int r) {
    results[r] = input_of(r, n);
    AllreduceOptions o;
    o.timeout = std::chrono::seconds(10);
    o.wire = protocols::codec_row("fp16")->id;
    AllreduceRing ring(group.at(r), group.ids(), results[r], o);
    ring.run();
    drops[r] = ring.drops();
  });
  BOOST_TEST(drops[1]["non_finite"] == 1u);
  BOOST_TEST(std::memcmp(results[0].data(), results[1].data(), n * sizeof(float)) == 0);
  for (float x : results[1]) BOOST_TEST(std::isfinite(x));
}

BOOST_AUTO_TEST_CASE(only_fp32_fp16_and_bf16_travel_in_the_ring) {
  PeerGroup group(2);
  group.connect_ring();
  std::vector<float> v(10);
  AllreduceOptions o;
  o.wire = protocols::codec_row("topk")->id;
  BOOST_CHECK_THROW(AllreduceRing(group.at(0), {0, 1}, v, o), InvalidArgument);
  AllreduceRing ring(group.at(0), {0, 1}, v);
  std::vector<float> wrong_length(9);
  BOOST_CHECK_THROW(ring.run(wrong_length), InvalidArgument);
}
