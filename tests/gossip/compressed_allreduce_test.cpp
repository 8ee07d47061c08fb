// Compressed all-reduce on real sockets, every peer a thread: after every run all peers
// hold the identical model; with the sparse codecs it equals the common model plus the
// mean of the decoded changes, with fp16/bf16 the mean within 16-bit rounding of the
// changes, QSGD's quantizing ring keeps what it rounds away in the residuals, with PowerSGD the exact mean of rank-r changes; what
// compression leaves out stays in the residuals (model + Σ residual / p is the dense
// result) and drains into the model; bytes sent shrink by the expected factors; bad frames
// are dropped and counted.
#define BOOST_TEST_MODULE gossip_compressed_allreduce
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gossip/algorithms/allreduce_ring.h"
#include "gossip/algorithms/codec_streams.h"
#include "gossip/algorithms/compressed_allreduce.h"
#include "gossip/transport/error.h"
#include "peer_group.h"
#include "protocols/codec_row.h"

using namespace starling::gossip;
using starling::gossip::testing::PeerGroup;
namespace data = boost::unit_test::data;
namespace protocols = starling::protocols;

namespace {

using Vectors = std::vector<std::vector<float>>;

std::vector<float> random_vector(std::uint32_t seed, std::size_t n, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Setup {
  std::string codec;
  protocols::CodecOptions options;
  std::size_t length = 3000;
  std::size_t segment_bytes = 4096;  // 1024 floats: three segments
};

// p peers with a CompressedAllreduce each over their own model; the models start apart
// (the uncompressed first run makes them one).
class Exchange {
 public:
  Exchange(PeerGroup& group, const Setup& setup) : group_(group), setup_(setup), models_(group.size()) {
    for (int r = 0; r < group.size(); ++r) {
      models_[r] = random_vector(100 + r, setup.length, 1.0f);
      CompressedAllreduceOptions o;
      o.segment_bytes = setup.segment_bytes;
      o.timeout = std::chrono::seconds(10);
      peers_.push_back(std::make_unique<CompressedAllreduce>(group.at(r), group.ids(), models_[r], setup.codec,
                                                             setup.options, o));
    }
  }

  /// change(rank, model) on every peer, then one run; returns the bytes each peer sent
  /// (to its right neighbour, the only one it sends to).
  std::vector<std::uint64_t> run(const std::function<void(int, std::vector<float>&)>& change = {}) {
    const int p = size();
    std::vector<std::uint64_t> sent(p);
    for (int r = 0; r < p; ++r) sent[r] = group_.bytes_received((r + 1) % p, r);
    group_.run_all([&](int r) {
      if (change) change(r, models_[r]);
      peers_[r]->run();
    });
    for (int r = 0; r < p; ++r) sent[r] = group_.bytes_received((r + 1) % p, r) - sent[r];
    return sent;
  }

  const Vectors& models() const { return models_; }
  CompressedAllreduce& peer(int r) { return *peers_[r]; }
  int size() const { return static_cast<int>(models_.size()); }

  /// Σ_peers residual / p, per element.
  std::vector<double> mean_residual() const {
    std::vector<double> m(setup_.length, 0.0);
    for (const auto& peer : peers_)
      for (std::size_t i = 0; i < m.size(); ++i) m[i] += peer->residual()[i] / static_cast<double>(peers_.size());
    return m;
  }

 private:
  PeerGroup& group_;
  Setup setup_;
  Vectors models_;
  std::vector<std::unique_ptr<CompressedAllreduce>> peers_;
};

void check_identical(const Exchange& ex, const std::string& when) {
  const Vectors& m = ex.models();
  for (int r = 1; r < ex.size(); ++r)
    BOOST_TEST(std::memcmp(m[r].data(), m[0].data(), m[0].size() * sizeof(float)) == 0,
               "peer " << r << " differs from peer 0 " << when);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Each peer's own change for a round: a fixed random vector per peer (and offset).
std::vector<float> change_of(int rank, std::size_t n) { return random_vector(700 + rank, n, 0.01f); }

using Change = std::function<void(int, std::vector<float>&)>;

/// Adds change_of(rank + offset) to a peer's model.
Change add_changes(int offset = 0) {
  return [offset](int r, std::vector<float>& x) {
    const std::vector<float> c = change_of(r + offset, x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += c[i];
  };
}

/// The same changes applied to the dense (uncompressed) result: their mean over p peers.
void add_mean_change(std::vector<double>& dense, int p, int offset = 0) {
  for (int r = 0; r < p; ++r) {
    const std::vector<float> c = change_of(r + offset, dense.size());
    for (std::size_t i = 0; i < dense.size(); ++i) dense[i] += c[i] / static_cast<double>(p);
  }
}

/// How far model + Σ residual / p is from the dense result: what error feedback lost.
double unaccounted(const Exchange& ex, const std::vector<double>& dense) {
  const std::vector<double> kept = ex.mean_residual();
  double worst = 0.0;
  for (std::size_t i = 0; i < dense.size(); ++i)
    worst = std::max(worst, std::abs(ex.models()[0][i] + kept[i] - dense[i]));
  return worst;
}

struct Drain {
  double first_gap = 0.0;  // to the dense mean, after the run with the change
  double last_gap = 0.0;   // after the last run
};

/// One change on every peer, then runs with none. After each run the peers agree and
/// model + Σ residual / p is the dense result.
Drain drain(const Setup& s, int p, int runs) {
  PeerGroup group(p);
  group.connect_ring();
  Exchange ex(group, s);
  ex.run();
  std::vector<double> dense(ex.models()[0].begin(), ex.models()[0].end());
  add_mean_change(dense, p);
  Drain d;
  for (int k = 1; k <= runs; ++k) {
    ex.run(k == 1 ? add_changes() : nullptr);
    check_identical(ex, "in run " + std::to_string(k));
    const double lost = unaccounted(ex, dense);
    BOOST_TEST(lost < 3e-6, s.codec << " run " << k << ": model + residual is " << lost << " off");
    d.last_gap = max_abs_diff(ex.models()[0], dense);
    if (k == 1) d.first_gap = d.last_gap;
  }
  BOOST_TEST_MESSAGE(s.codec << ": gap to the dense mean " << d.first_gap << " after one run, " << d.last_gap
                             << " after " << runs);
  return d;
}

const char* const kSparseCodecs[] = {"topk", "threshold", "qsgd", "sign"};
// Those whose payloads go round by the all-gather (qsgd travels in the quantizing ring).
const char* const kGatherCodecs[] = {"topk", "threshold", "sign"};

protocols::CodecOptions options_for(const std::string& codec) {
  protocols::CodecOptions o;
  o.set("density", codec == "threshold" ? 0.0 : 0.1);  // threshold: a fixed τ
  o.set("tau", 0.004f);
  o.set("bits", 4);
  return o;
}

}  // namespace

// The first compressed run, decoded by hand: every peer's change Δ_r encoded by the same
// codec streams (same seeds, zero residual), decoded in rank order, divided by p, added to
// the common model. The peers must hold exactly that, bit for bit.
BOOST_DATA_TEST_CASE(sparse_allgather_applies_the_mean_of_the_decoded_changes,
                     data::make({2, 3, 4}) * data::make({0, 1, 2}), p, which) {
  Setup s;
  s.codec = kGatherCodecs[which];
  s.options = options_for(s.codec);
  BOOST_TEST_CONTEXT("p=" << p << " codec=" << s.codec) {
    PeerGroup group(p);
    group.connect_ring();
    Exchange ex(group, s);
    ex.run();
    check_identical(ex, "after the uncompressed first run");
    const std::vector<float> base = ex.models()[0];
    ex.run(add_changes());
    check_identical(ex, "after a compressed run");

    const std::size_t per_segment = s.segment_bytes / sizeof(float);
    const std::size_t segments = (s.length + per_segment - 1) / per_segment;
    std::vector<float> sum(s.length, 0.0f);
    for (int r = 0; r < p; ++r) {
      auto codecs = make_codec_streams(s.codec, s.options, static_cast<PeerId>(r), segments);
      const std::vector<float> c = change_of(r, s.length);
      std::vector<float> delta(s.length), residual(s.length, 0.0f);
      for (std::size_t i = 0; i < s.length; ++i) delta[i] = (base[i] + c[i]) - base[i];
      for (std::size_t seg = 0; seg < segments; ++seg) {
        const std::size_t b = seg * per_segment, count = std::min(per_segment, s.length - b);
        std::vector<std::uint8_t> payload;
        BOOST_TEST_REQUIRE((codecs[seg]->encode({delta.data() + b, count}, {residual.data() + b, count}, payload) ==
                            protocols::Error::ok));
        BOOST_TEST_REQUIRE((codecs[seg]->decode({payload.data(), payload.size()}, {sum.data() + b, count},
                                                protocols::Apply::add) == protocols::Error::ok));
      }
    }
    std::vector<float> expected(s.length);
    for (std::size_t i = 0; i < s.length; ++i) expected[i] = base[i] + sum[i] / static_cast<float>(p);
    BOOST_TEST(std::memcmp(expected.data(), ex.models()[0].data(), s.length * sizeof(float)) == 0);
    for (int r = 0; r < p; ++r) BOOST_TEST(ex.peer(r).drops().empty());
  }
}

// Error feedback: model + Σ residual / p is, after every run, the uncompressed result
// (the mean of everything the peers added); a change made once and then nothing drains
// from the residuals into the model until the model is that mean (top-k, QSGD).
BOOST_DATA_TEST_CASE(error_feedback_keeps_what_compression_left_out, data::make({0, 1, 2, 3}), which) {
  Setup s;
  s.codec = kSparseCodecs[which];
  s.options = options_for(s.codec);
  const Drain d = drain(s, 3, 25);
  if (s.codec == "topk" || s.codec == "qsgd") BOOST_TEST(d.last_gap < 3e-6);  // everything arrived
  if (s.codec == "threshold") BOOST_TEST(d.last_gap <= s.options.get("tau", 0.0));        // all but sub-τ leftovers
  BOOST_TEST(d.last_gap < d.first_gap);
}

// A fixed change every round: the compressed models follow the dense mean at a distance
// the residuals bound, which does not grow with the number of rounds, so relative to how
// far the mean has moved it shrinks like 1/rounds.
BOOST_AUTO_TEST_CASE(a_fixed_change_every_round_tracks_the_dense_mean) {
  const int p = 4, rounds = 60;
  Setup s;
  s.codec = "topk";
  s.options.set("density", 0.05);
  PeerGroup group(p);
  group.connect_ring();
  Exchange ex(group, s);
  ex.run();
  std::vector<double> dense(ex.models()[0].begin(), ex.models()[0].end());
  std::vector<double> step(s.length, 0.0);
  add_mean_change(step, p);
  double step_size = 0.0;
  for (double v : step) step_size = std::max(step_size, std::abs(v));
  std::vector<double> gaps;
  for (int k = 1; k <= rounds; ++k) {
    ex.run(add_changes());
    add_mean_change(dense, p);
    gaps.push_back(max_abs_diff(ex.models()[0], dense));
  }
  check_identical(ex, "after " + std::to_string(rounds) + " runs");
  BOOST_TEST_MESSAGE("top-k 5%, fixed change: gap " << gaps[rounds / 2 - 1] << " after " << rounds / 2 << " runs, "
                                                    << gaps.back() << " after " << rounds << "; dense moved "
                                                    << rounds * step_size);
  BOOST_TEST(gaps.back() < 0.2 * rounds * step_size);
  BOOST_TEST(gaps.back() < 1.5 * gaps[rounds / 2 - 1] + 1e-6);  // bounded, not growing
}

BOOST_DATA_TEST_CASE(sixteen_bit_changes_stay_within_rounding, data::make({2, 3, 4}) * data::make({"fp16", "bf16"}),
                     p, codec) {
  Setup s;
  s.codec = codec;
  BOOST_TEST_CONTEXT("p=" << p << " codec=" << s.codec) {
    PeerGroup group(p);
    group.connect_ring();
    Exchange ex(group, s);
    ex.run();
    std::vector<double> dense(ex.models()[0].begin(), ex.models()[0].end());
    const double u = s.codec == "fp16" ? 0x1p-11 : 0x1p-8;
    for (int k = 1; k <= 3; ++k) {
      ex.run(add_changes(k));
      add_mean_change(dense, p, k);
      check_identical(ex, "in run " + std::to_string(k));
      // Changes are at most 0.01; their 16-bit rounding (and the fp32 additions to the
      // model, about 1e-7) bound the distance to the dense mean.
      BOOST_TEST(max_abs_diff(ex.models()[0], dense) < 2 * 0.01 * p * u + 1e-6);
      BOOST_TEST(unaccounted(ex, dense) < 1e-6);
    }
  }
}

// PowerSGD by reduce: changes u·v_rᵀ of rank one have a rank-one mean, which one rank-1
// power step recovers exactly, leaving nothing in the residuals.
BOOST_DATA_TEST_CASE(powersgd_reduce_is_exact_for_low_rank_changes, data::make({2, 3, 4}), p) {
  Setup s;
  s.codec = "powersgd";
  s.options.set("rank", 1);
  s.length = 48 * 64;            // one 48×64 matrix
  s.segment_bytes = 48 * 64 * 4;
  PeerGroup group(p);
  group.connect_ring();
  Exchange ex(group, s);
  ex.run();
  std::vector<double> dense(ex.models()[0].begin(), ex.models()[0].end());
  const std::vector<float> u = random_vector(5, 48, 0.1f);
  Vectors v;
  for (int r = 0; r < p; ++r) v.push_back(random_vector(900 + r, 64, 0.1f));
  const auto change = [&](int r, std::size_t i) { return u[i / 64] * v[r][i % 64]; };
  ex.run([&](int r, std::vector<float>& x) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += change(r, i);
  });
  for (int r = 0; r < p; ++r)
    for (std::size_t i = 0; i < s.length; ++i) dense[i] += change(r, i) / p;
  check_identical(ex, "after a compressed run");
  BOOST_TEST(max_abs_diff(ex.models()[0], dense) < 1e-6);
  for (int r = 0; r < p; ++r)
    for (float x : ex.peer(r).residual()) BOOST_TEST_REQUIRE(std::abs(x) < 1e-6);
}

// Full-rank changes: identical models, model + Σ residual / p is the dense mean, and the
// residual drains when nothing new comes.
BOOST_AUTO_TEST_CASE(powersgd_reduce_feeds_back_what_the_rank_left_out) {
  Setup s;
  s.codec = "powersgd";
  s.options.set("rank", 4);
  s.length = 2 * 1024 + 600;  // two 32×32 matrices and a 24×25 one
  const Drain d = drain(s, 3, 40);
  BOOST_TEST(d.last_gap < 0.05 * d.first_gap);
}

// Bytes one run sends, against the fp32 ring all-reduce of the same vector (p = 4).
BOOST_AUTO_TEST_CASE(bytes_on_the_wire) {
  const int p = 4;
  const std::size_t n = 1 << 17;
  PeerGroup group(p);
  group.connect_ring();
  std::uint64_t dense = 0;
  {
    Vectors v(p);
    group.run_all([&](int r) {
      v[r] = random_vector(r, n, 1.0f);
      AllreduceOptions o;
      o.segment_bytes = 64 * 1024;
      AllreduceRing ring(group.at(r), group.ids(), v[r], o);
      ring.run();
    });
    dense = group.bytes_received(1, 0);
  }
  struct Case {
    const char* codec;
    double density;
    int rank;
    double expected;  // bytes / dense bytes, from the formats
  };
  // Dense sends 2(p−1)/p·4n = 6n bytes per peer; an all-gather (p−1) payloads per segment;
  // a quantizing ring the dense ring's share in its format.
  const Case cases[] = {
      {"fp16", 0, 1, 0.5},
      {"bf16", 0, 1, 0.5},
      {"topk", 0.01, 1, 3 * 8 * 0.01 / 6},  // index + value per entry
      {"sign", 0, 1, 3 * 0.125 / 6},       // one bit per entry
      {"qsgd", 0, 1, 0.125 * (1 + 32.0 / (4 * 512))},  // the ring's, 4 bits per entry and a scale per 512
      {"topk-2bit", 0.01, 1, 3 * 4.25 * 0.01 / 6},      // index + 2 bits per entry
      {"powersgd", 0, 4, 4.0 * 256 / 16384},  // 128×128 blocks, P and Q of rank 4
  };
  for (const Case& c : cases) {
    Setup s;
    const bool two_bit = std::string(c.codec) == "topk-2bit";
    s.codec = two_bit ? "topk" : c.codec;
    s.options.set("value_bits", two_bit ? 2 : 32);
    s.options.set("density", c.density);
    s.options.set("bits", 4);
    s.options.set("rank", c.rank);
    s.length = n;
    s.segment_bytes = 64 * 1024;
    PeerGroup fresh(p);
    fresh.connect_ring();
    Exchange ex(fresh, s);
    ex.run();
    const std::vector<std::uint64_t> sent = ex.run([&](int r, std::vector<float>& x) {
      const std::vector<float> d = random_vector(300 + r, n, 0.01f);
      for (std::size_t i = 0; i < n; ++i) x[i] += d[i];
    });
    const double ratio = static_cast<double>(sent[0]) / static_cast<double>(dense);
    BOOST_TEST_MESSAGE(c.codec << ": " << sent[0] << " bytes per peer per run, " << ratio << " of fp32's " << dense
                               << " (formats predict " << c.expected << ")");
    BOOST_TEST(ratio < 1.1 * c.expected + 0.002, c.codec);
    BOOST_TEST(ratio > 0.75 * c.expected, c.codec);  // top-k may send fewer than k
  }
}

// Peer 0 sends peer 1 a stale frame and a well-formed frame of the right round and range
// whose codec payload is garbage, before the real ones: both are dropped and counted, and
// the run still ends with identical models.
BOOST_AUTO_TEST_CASE(bad_frames_are_dropped_and_counted) {
  const int p = 3;
  Setup s;
  s.codec = "topk";
  s.options.set("density", 0.1);
  PeerGroup group(p);
  group.connect_ring();
  Exchange ex(group, s);
  ex.run();
  protocols::FrameHeader h;
  h.type = protocols::MessageType::allreduce_segment;
  h.codec = protocols::codec_row("topk")->id;
  h.flags = protocols::kFlagAllGather;
  h.round = 0;
  h.tensor_offset = 0;
  h.tensor_length = 1024;
  std::vector<std::uint8_t> garbage(64, 0xAB);
  garbage[0] = static_cast<std::uint8_t>(protocols::codec_row("topk")->id);
  group.at(0).send(1, h, protocols::ByteSpan(garbage.data(), garbage.size()));
  h.round = 1;
  group.at(0).send(1, h, protocols::ByteSpan(garbage.data(), garbage.size()));
  ex.run(add_changes());
  check_identical(ex, "after bad frames");
  const auto drops = ex.peer(1).drops();
  std::uint64_t total = 0;
  for (const auto& [reason, count] : drops) total += count;
  const auto stale = drops.find("stale_round");
  BOOST_TEST((stale != drops.end() && stale->second == 1u));
  BOOST_TEST(total == 2u);
  BOOST_TEST(ex.peer(0).drops().empty());
}

BOOST_AUTO_TEST_CASE(a_missing_peer_ends_in_a_timeout) {
  PeerGroup group(2);
  group.connect_ring();
  std::vector<float> v(100, 1.0f);
  CompressedAllreduceOptions o;
  o.timeout = std::chrono::milliseconds(200);
  CompressedAllreduce ex(group.at(0), group.ids(), v, "topk", {}, o);
  BOOST_CHECK_THROW(ex.run(), TimeoutError);
}

BOOST_AUTO_TEST_CASE(bad_setup_is_rejected) {
  PeerGroup group(2);
  group.connect_ring();
  std::vector<float> v(10);
  BOOST_CHECK_THROW(CompressedAllreduce(group.at(0), group.ids(), v, "none"), InvalidArgument);
  BOOST_CHECK_THROW(CompressedAllreduce(group.at(0), group.ids(), v, "zip"), InvalidArgument);
  protocols::CodecOptions o;
  o.set("rank", 0);
  BOOST_CHECK_THROW(CompressedAllreduce(group.at(0), group.ids(), v, "powersgd", o), InvalidArgument);
  o.set("rank", 1);
  o.set("rows", 3);  // does not divide 10
  BOOST_CHECK_THROW(CompressedAllreduce(group.at(0), group.ids(), v, "powersgd", o), InvalidArgument);
  BOOST_CHECK_THROW(CompressedAllreduce(group.at(0), {0, 0}, v, "topk"), InvalidArgument);
  CompressedAllreduce ok(group.at(0), group.ids(), v, "topk");
  BOOST_CHECK_THROW(ok.set_density(0.0), InvalidArgument);
}

// A first run on models that are already the same bits everywhere keeps them and sends
// only the check (two all-reduces of a few floats); one differing peer, in any place,
// makes every peer run the fp32 all-reduce, and all end with the mean.
BOOST_DATA_TEST_CASE(a_first_run_on_models_that_agree_sends_only_the_check, data::make({-1, 0, 2}), differing) {
  const int p = 3;
  Setup s;
  s.codec = "qsgd";
  s.options.set("bits", 4);
  PeerGroup group(p);
  group.connect_ring();
  Exchange ex(group, s);
  const std::vector<float> common = random_vector(5, s.length, 1.0f);
  const std::vector<std::uint64_t> sent = ex.run([&](int r, std::vector<float>& x) {
    x = common;
    if (r == differing) x[17] += 1.0f;
  });
  check_identical(ex, "after the first run");
  if (differing < 0) {
    BOOST_TEST(ex.models()[0] == common, boost::test_tools::per_element());
    BOOST_TEST(sent[0] < 1000u);  // two tiny rings' frames, not 3000 floats
  } else {
    BOOST_TEST(ex.models()[0][17] == common[17] + 1.0f / 3.0f, boost::test_tools::tolerance(1e-6f));
    BOOST_TEST(sent[0] > 3000u * 4u);
  }
}
