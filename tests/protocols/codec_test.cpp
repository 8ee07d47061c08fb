// Codec tests: round trips, error feedback, unbiasedness, format switches, adaptive τ,
// malformed payloads, and agreement of the scalar, AVX2 and AVX-512 paths.
#define BOOST_TEST_MODULE protocols_codecs
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <set>

#include "codec_test_util.h"
#include "platform/cpu_features.h"
#include "protocols/byte_io.h"
#include "protocols/codec.h"
#include "protocols/codecs/powersgd_codec.h"
#include "protocols/codecs/threshold_codec.h"
#include "protocols/simd/scalar_kernels.h"

using namespace starling::protocols;
using namespace codec_test;
namespace isa = starling::platform;

BOOST_AUTO_TEST_SUITE(round_trips)

BOOST_AUTO_TEST_CASE(error_feedback_identity_every_codec) {
  // decoded + new residual == values + old residual, entry by entry, for every codec's samples.
  for (const Sample& sample : all_samples()) {
    BOOST_TEST_CONTEXT(sample.label) {
      for (std::size_t n : {0, 1, 15, 17, 1000, 4099, 40000}) {
        auto codec = codec_named(sample.codec, sample.options);
        const auto values = gaussian(n, 1 + static_cast<unsigned>(n));
        auto residual = gaussian(n, 2, 0.1f);
        std::vector<float> before(n);
        for (std::size_t i = 0; i < n; ++i) before[i] = values[i] + residual[i];
        std::vector<std::uint8_t> payload;
        BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
        const auto out = decoded(*codec, payload, n);
        for (std::size_t i = 0; i < n; ++i)
          BOOST_TEST_REQUIRE(std::fabs(out[i] + residual[i] - before[i]) <= 1e-5f * (1.0f + std::fabs(before[i])));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(dense_accuracy) {
  const std::size_t n = 10000;
  const auto values = gaussian(n, 3, 100.0f);
  for (auto [name, rel] : {std::pair{"none", 0.0f}, {"fp16", 1.0f / 2048}, {"bf16", 1.0f / 256}}) {
    auto codec = codec_named(name);
    std::vector<float> residual(n, 0.0f);
    std::vector<std::uint8_t> payload;
    BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
    BOOST_TEST(payload.size() == 8 + n * (rel == 0.0f ? 4 : 2));
    const auto out = decoded(*codec, payload, n);
    for (std::size_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(std::fabs(out[i] - values[i]) <= rel * std::fabs(values[i]));
  }
}

BOOST_AUTO_TEST_CASE(fp16_saturates_instead_of_overflowing) {
  auto codec = codec_named("fp16");
  std::vector<float> values = {1e6f, -1e6f, 1e-9f}, residual(3, 0.0f);
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
  const auto out = decoded(*codec, payload, 3);
  BOOST_TEST(out[0] == 65504.0f);
  BOOST_TEST(residual[0] == 1e6f - 65504.0f);
}

BOOST_AUTO_TEST_CASE(decode_accumulates) {
  for (const Sample& sample : all_samples()) {
    BOOST_TEST_CONTEXT(sample.label) {
      auto codec = codec_named(sample.codec, sample.options);
      const auto values = gaussian(512, 4);
      std::vector<float> residual(512, 0.0f);
      std::vector<std::uint8_t> payload;
      BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
      const auto once = decoded(*codec, payload, 512);
      std::vector<float> acc(512, 1.0f);
      BOOST_TEST_REQUIRE(to_string(codec->decode(payload, Span<float>(acc), Apply::add)) == "ok");
      // PowerSGD adds its rank terms into the destination one by one: the same sum, rounded
      // in another order. Every other codec adds exactly what it decodes.
      const float slack = codec_row(sample.codec)->route == AllreduceRoute::low_rank ? 1e-6f : 0.0f;
      for (std::size_t i = 0; i < 512; ++i)
        BOOST_TEST_REQUIRE(std::fabs(acc[i] - (1.0f + once[i])) <= slack * (1.0f + std::fabs(acc[i])));
    }
  }
}

BOOST_AUTO_TEST_CASE(sum_is_preserved_over_rounds) {
  // After N rounds, Σ decoded + residual equals Σ inputs to rounding.
  const std::size_t n = 3000;
  for (const std::string& name : all_codecs()) {
    BOOST_TEST_CONTEXT(name) {
      CodecOptions options;
      options.set("density", 0.05);
      auto codec = codec_named(name, options);
      std::vector<float> residual(n, 0.0f);
      std::vector<double> sent(n, 0.0), input(n, 0.0);
      std::vector<std::uint8_t> payload;
      for (int round = 0; round < 30; ++round) {
        const auto values = gaussian(n, 100 + round, 0.3f);
        for (std::size_t i = 0; i < n; ++i) input[i] += values[i];
        BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
        const auto out = decoded(*codec, payload, n);
        for (std::size_t i = 0; i < n; ++i) sent[i] += out[i];
      }
      double worst = 0.0;
      for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(sent[i] + residual[i] - input[i]));
      BOOST_TEST(worst < 1e-4);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sparse_codecs)

BOOST_AUTO_TEST_CASE(threshold_sends_tau_and_switches_at_one_sixteenth) {
  const std::size_t n = 16 * 1000;
  for (std::size_t hits : {n / 16 - 1, n / 16, n / 16 + 1, n / 2}) {
    CodecOptions options;
    options.set("tau", 0.5f);
    options.set("density", 0.0);  // fixed τ
    codecs::ThresholdCodec codec(options);
    std::vector<float> values(n, 0.1f), residual(n, 0.0f);
    for (std::size_t j = 0; j < hits; ++j) values[(j * 7919) % n] = (j % 2) ? 0.75f : -0.75f;
    std::vector<std::uint8_t> payload;
    BOOST_TEST_REQUIRE(to_string(codec.encode(values, residual, payload)) == "ok");
    BOOST_TEST(codec.last_sent() == hits);
    const bool bitmap = hits * 16 > n;
    BOOST_TEST(codec.last_was_bitmap() == bitmap);
    BOOST_TEST(payload[1] == (bitmap ? codecs::ThresholdCodec::kBitmap : codecs::ThresholdCodec::kSparse));
    BOOST_TEST(payload.size() == 16 + (bitmap ? n / 4 : 4 * hits));
    const auto out = decoded(codec, payload, n);
    for (std::size_t i = 0; i < n; ++i) {
      const float want = values[i] == 0.75f ? 0.5f : (values[i] == -0.75f ? -0.5f : 0.0f);
      BOOST_TEST_REQUIRE(out[i] == want);
    }
  }
}

BOOST_AUTO_TEST_CASE(threshold_tau_adapts_at_most_2x_per_20_rounds) {
  const std::size_t n = 50000;
  CodecOptions options;
  options.set("tau", 1e-4f);
  options.set("density", 0.01);
  codecs::ThresholdCodec codec(options);
  std::vector<float> residual(n, 0.0f);
  std::vector<std::uint8_t> payload;
  float previous = codec.tau();
  for (int round = 0; round < 400; ++round) {
    const auto values = gaussian(n, 200 + round, 0.01f);
    BOOST_TEST_REQUIRE(to_string(codec.encode(values, residual, payload)) == "ok");
    const float ratio = codec.tau() / previous;
    BOOST_TEST_REQUIRE(ratio <= 1.0353f);
    BOOST_TEST_REQUIRE(ratio >= 1.0f / 1.0353f);
    previous = codec.tau();
  }
  const double density = static_cast<double>(codec.last_sent()) / n;
  BOOST_TEST(density > 0.003);
  BOOST_TEST(density < 0.03);
}

BOOST_AUTO_TEST_CASE(threshold_clips_residual) {
  CodecOptions options;
  options.set("tau", 0.1f);
  options.set("clip", 3.0f);
  options.set("density", 0.0);
  codecs::ThresholdCodec codec(options);
  const auto values = gaussian(5000, 5, 10.0f);
  std::vector<float> residual(5000, 0.0f);
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec.encode(values, residual, payload)) == "ok");
  for (float r : residual) BOOST_TEST_REQUIRE(std::fabs(r) <= 0.3f + 1e-6f);
}

BOOST_AUTO_TEST_CASE(threshold_one_percent_is_fifty_times_smaller) {
  const std::size_t n = 1 << 20;
  CodecOptions options;
  options.set("tau", 2.576f);  // two-sided 1% quantile of N(0, 1)
  options.set("density", 0.0);
  codecs::ThresholdCodec codec(options);
  const auto values = gaussian(n, 6);
  std::vector<float> residual(n, 0.0f);
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec.encode(values, residual, payload)) == "ok");
  BOOST_TEST(payload.size() * 50 < n * 4);
}

BOOST_AUTO_TEST_CASE(topk_selects_the_largest) {
  for (std::size_t n : {1000, 20000, 300000}) {
    CodecOptions options;
    options.set("density", 0.01);
    auto codec = codec_named("topk", options);
    const auto values = gaussian(n, 7 + static_cast<unsigned>(n));
    std::vector<float> residual(n, 0.0f);
    std::vector<std::uint8_t> payload;
    BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
    const std::size_t k = (n + 99) / 100;
    BOOST_TEST(codec->last_sent() <= k);
    BOOST_TEST(codec->last_sent() >= k * 8 / 10);
    std::vector<float> mags(n);
    for (std::size_t i = 0; i < n; ++i) mags[i] = std::fabs(values[i]);
    std::nth_element(mags.begin(), mags.begin() + (k - 1), mags.end(), std::greater<float>());
    const float kth = mags[k - 1];
    const auto out = decoded(*codec, payload, n);
    std::size_t sent = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i] != 0.0f) {
        ++sent;
        BOOST_TEST_REQUIRE(out[i] == values[i]);
        BOOST_TEST_REQUIRE(std::fabs(values[i]) >= kth);
      }
    }
    BOOST_TEST(sent == codec->last_sent());
  }
}

// SparseLoCo's values: the same k entries as exact top-k, each sent as its sign and one of two
// magnitudes, the means of the sent magnitudes at most and above the midpoint of their range;
// what that rounding changed stays in the residual (the identity within float rounding), at
// a quarter byte per value.
BOOST_AUTO_TEST_CASE(topk_two_bit_values_are_signs_and_two_means) {
  for (std::size_t n : {0, 1, 1000, 20000}) {
    CodecOptions options;
    options.set("density", 0.02);
    auto exact = codec_named("topk", options);
    options.set("value_bits", 2);
    auto two_bit = codec_named("topk", options);
    const auto values = gaussian(n, 9 + static_cast<unsigned>(n));
    std::vector<float> r_exact(n, 0.0f), r_two(n, 0.0f);
    std::vector<std::uint8_t> p_exact, p_two;
    BOOST_TEST_REQUIRE(to_string(exact->encode(values, r_exact, p_exact)) == "ok");
    BOOST_TEST_REQUIRE(to_string(two_bit->encode(values, r_two, p_two)) == "ok");
    const auto sent = decoded(*exact, p_exact, n), rounded = decoded(*two_bit, p_two, n);
    const std::size_t k = exact->last_sent();
    BOOST_TEST(two_bit->last_sent() == k);
    BOOST_TEST(p_two.size() == 8 + 4 + 4 * k + 8 + (k + 3) / 4);
    double low_sum = 0, high_sum = 0;
    float lo = INFINITY, hi = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (sent[i] != 0.0f) lo = std::min(lo, std::fabs(sent[i])), hi = std::max(hi, std::fabs(sent[i]));
    std::size_t lows = 0, highs = 0;
    for (std::size_t i = 0; i < n; ++i) {
      BOOST_TEST_REQUIRE((sent[i] == 0.0f) == (rounded[i] == 0.0f));  // the same entries
      if (sent[i] == 0.0f) continue;
      BOOST_TEST_REQUIRE(std::signbit(sent[i]) == std::signbit(rounded[i]));
      const bool high = std::fabs(sent[i]) > 0.5f * (lo + hi);
      (high ? high_sum : low_sum) += std::fabs(sent[i]);
      ++(high ? highs : lows);
      BOOST_TEST_REQUIRE(std::fabs(rounded[i] + r_two[i] - values[i]) <= 1e-6f * (1.0f + std::fabs(values[i])));
    }
    std::set<float> magnitudes;
    for (float v : rounded)
      if (v != 0.0f) magnitudes.insert(std::fabs(v));
    BOOST_TEST(magnitudes.size() <= 2u);
    if (lows) BOOST_TEST(magnitudes.count(static_cast<float>(low_sum / lows)) == 1u);
    if (highs) BOOST_TEST(magnitudes.count(static_cast<float>(high_sum / highs)) == 1u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(quantizers)

BOOST_AUTO_TEST_CASE(qsgd_is_unbiased) {
  const std::size_t n = 256;
  const auto values = gaussian(n, 8);
  for (int bits : {2, 4, 8}) {
    std::vector<double> mean(n, 0.0);
    const int trials = 2000;
    for (int t = 0; t < trials; ++t) {
      CodecOptions options;
      options.set("bits", bits);
      options.seed = static_cast<std::uint64_t>(t) * 7919 + 1;
      auto codec = codec_named("qsgd", options);
      std::vector<float> residual(n, 0.0f);
      std::vector<std::uint8_t> payload;
      BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
      const auto out = decoded(*codec, payload, n);
      for (std::size_t i = 0; i < n; ++i) mean[i] += out[i] / trials;
    }
    float scale = 0.0f;
    for (float v : values) scale = std::max(scale, std::fabs(v));
    const double level = scale / ((1 << (bits - 1)) - 1);
    for (std::size_t i = 0; i < n; ++i)  // standard error of the mean is at most level / (2·√trials)
      BOOST_TEST_REQUIRE(std::fabs(mean[i] - values[i]) < 5.0 * level / (2.0 * std::sqrt(trials)) + 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(qsgd_payload_size) {
  for (int bits = 2; bits <= 8; ++bits) {
    CodecOptions options;
    options.set("bits", bits);
    auto codec = codec_named("qsgd", options);
    const std::size_t n = 1001;
    const auto values = gaussian(n, 9);
    std::vector<float> residual(n, 0.0f);
    std::vector<std::uint8_t> payload;
    BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
    BOOST_TEST(payload.size() == 8 + 4 + 4 * 2 + (n * bits + 7) / 8);
  }
}

BOOST_AUTO_TEST_CASE(sign_sends_mean_magnitude) {
  const std::size_t n = 4096 + 13;
  auto codec = codec_named("sign");
  const auto values = gaussian(n, 10);
  std::vector<float> residual(n, 0.0f);
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
  const auto out = decoded(*codec, payload, n);
  double mean = 0.0;
  for (std::size_t i = 0; i < 2048; ++i) mean += std::fabs(values[i]) / 2048;
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE((out[i] < 0) == (values[i] < 0));
  BOOST_TEST(std::fabs(out[0]) == mean, boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(powersgd_recovers_low_rank) {
  const std::size_t rows = 64, cols = 96;
  for (int rank : {1, 2}) {
    std::vector<float> m(rows * cols, 0.0f);
    for (int k = 0; k < rank; ++k) {
      const auto u = gaussian(rows, 11 + k), v = gaussian(cols, 21 + k);
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) m[i * cols + j] += u[i] * v[j];
    }
    CodecOptions options;
    options.set("rank", rank);
    options.set("rows", rows);
    auto codec = codec_named("powersgd", options);
    std::vector<float> residual(rows * cols, 0.0f);
    std::vector<std::uint8_t> payload;
    BOOST_TEST_REQUIRE(to_string(codec->encode(m, residual, payload)) == "ok");
    BOOST_TEST(payload.size() == 8 + 12 + 4u * rank * (rows + cols));
    const auto out = decoded(*codec, payload, rows * cols);
    for (std::size_t i = 0; i < m.size(); ++i) BOOST_TEST_REQUIRE(std::fabs(out[i] - m[i]) < 1e-3f * (1 + std::fabs(m[i])));
  }
}

BOOST_AUTO_TEST_CASE(powersgd_factors_are_reduce_compatible) {
  // With a shared Q, Σ M_i·Q equals (Σ M_i)·Q: summing P factors is meaningful.
  const std::size_t rows = 16, cols = 24, rank = 2;
  const auto a = gaussian(rows * cols, 31), b = gaussian(rows * cols, 32), qt = gaussian(rank * cols, 33);
  std::vector<float> sum(rows * cols), pa(rows * rank), pb(rows * rank), ps(rows * rank);
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = a[i] + b[i];
  codecs::powersgd_project(a.data(), rows, cols, qt.data(), rank, pa.data());
  codecs::powersgd_project(b.data(), rows, cols, qt.data(), rank, pb.data());
  codecs::powersgd_project(sum.data(), rows, cols, qt.data(), rank, ps.data());
  for (std::size_t i = 0; i < ps.size(); ++i) BOOST_TEST(pa[i] + pb[i] == ps[i], boost::test_tools::tolerance(1e-4f));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(factory)

// Every row: a unique wire id and name, a codec of its own id, samples its checks accept, and
// options it shares with other codecs alike in default and kind (they share a config key).
BOOST_AUTO_TEST_CASE(rows_are_consistent) {
  std::set<int> ids;
  std::set<std::string> names;
  for (const CodecRow* row : codec_rows()) {
    BOOST_TEST_CONTEXT(row->name) {
      BOOST_TEST(ids.insert(static_cast<int>(row->id)).second);
      BOOST_TEST(names.insert(std::string(row->name)).second);
      BOOST_TEST(codec_row(row->id) == row);
      BOOST_TEST(codec_row(row->name) == row);
      BOOST_TEST_REQUIRE(!row->samples.empty());
      for (const CodecSample& sample : row->samples) {
        BOOST_TEST(!check_options(*row, sample.options()), sample.label);
        auto codec = make_codec(row->id, sample.options());
        BOOST_TEST_REQUIRE(codec.ok());
        BOOST_TEST(static_cast<int>((*codec)->id()) == static_cast<int>(row->id));
      }
      for (const CodecParam& p : row->params) {
        BOOST_TEST(p.allows(p.fallback), p.name);
        for (const CodecRow* other : codec_rows())
          if (const CodecParam* q = other->param(p.name)) {
            BOOST_TEST(q->fallback == p.fallback, p.name << " in " << other->name);
            BOOST_TEST(q->integer == p.integer, p.name << " in " << other->name);
            BOOST_TEST(q->config_key == p.config_key, p.name << " in " << other->name);
          }
      }
    }
  }
  BOOST_TEST(!codec_row(CodecId{200}));
  BOOST_TEST(!is_known_codec(200));
  BOOST_TEST(codec_name(CodecId{200}) == "unknown");
}

// Wire ids are part of the protocol: a codec keeps its id for good.
BOOST_AUTO_TEST_CASE(wire_ids_stay) {
  const std::pair<const char*, int> ids[] = {{"none", 0}, {"fp16", 1}, {"bf16", 2}, {"threshold", 3},
                                             {"topk", 4}, {"qsgd", 5}, {"sign", 6}, {"powersgd", 7}};
  for (const auto& [name, id] : ids) {
    BOOST_TEST_REQUIRE(codec_row(name));
    BOOST_TEST(static_cast<int>(codec_row(name)->id) == id, name);
  }
}

BOOST_AUTO_TEST_CASE(names_and_options) {
  for (const std::string& name : all_codecs()) {
    auto c = make_codec(name);
    BOOST_TEST_REQUIRE(c.ok());
    BOOST_TEST(codec_name((*c)->id()) == name);
  }
  BOOST_TEST(to_string(make_codec("zstd").error()) == "unknown_codec");
  CodecOptions bad;
  bad.set("bits", 9);
  BOOST_TEST(to_string(make_codec("qsgd", bad).error()) == "invalid_option");
  bad = {};
  bad.set("density", 0.0);
  BOOST_TEST(to_string(make_codec("topk", bad).error()) == "invalid_option");
  bad = {};
  bad.set("rank", 0);
  BOOST_TEST(to_string(make_codec("powersgd", bad).error()) == "invalid_option");
  bad = {};
  bad.set("bucket", 12);
  BOOST_TEST(to_string(make_codec("sign", bad).error()) == "invalid_option");
  bad = {};
  bad.set("bits", 4.5);
  BOOST_TEST(to_string(make_codec("qsgd", bad).error()) == "invalid_option");
  bad = {};
  bad.set("value_bits", 4);
  const auto problem = check_options(*codec_row("topk"), bad);
  BOOST_TEST_REQUIRE(problem.has_value());
  BOOST_TEST(problem->param == "value_bits");
  BOOST_TEST(problem->why == "expected 32 or 2");
  bad = {};
  bad.set("rank", 65);
  BOOST_TEST(check_options(*codec_row("powersgd"), bad)->why == "expected an integer in [1, 64]");
  BOOST_TEST(!check_options(*codec_row("fp16"), bad));  // another codec's option is not its business
  auto c = make_codec("none");
  std::vector<float> a(3), b(4);
  std::vector<std::uint8_t> out;
  BOOST_TEST(to_string((*c)->encode(a, b, out)) == "invalid_option");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(isa_paths)

// Payload and residual of codec `name` under one forced ISA.
std::pair<std::vector<std::uint8_t>, std::vector<float>> encode_with(isa::Isa path, const char* name,
                                                                     const std::vector<float>& values,
                                                                     CodecOptions options) {
  isa::force_isa(path);
  auto codec = codec_named(name, options);
  std::vector<float> residual(values.size(), 0.01f);
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
  return {payload, residual};
}

std::vector<float> wide_range_values(std::size_t n) {
  auto v = gaussian(n, 50);
  std::mt19937 rng(51);
  std::uniform_int_distribution<int> exponent(-30, 20);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::ldexp(v[i], exponent(rng));  // subnormal halves to saturation
  return v;
}

BOOST_AUTO_TEST_CASE(scalar_avx2_avx512_agree) {
  IsaGuard guard;
  const std::size_t n = 100003;
  const auto values = wide_range_values(n);
  const auto smooth = gaussian(n, 52);
  for (const char* name : {"none", "fp16", "bf16", "threshold", "topk", "qsgd", "sign"}) {
    for (double density : {0.01, 0.2}) {
      BOOST_TEST_CONTEXT(name << " density " << density) {
        CodecOptions options;
        options.set("density", density);
        options.set("bits", density > 0.1 ? 8 : 4);
        const bool dense = std::string(name) == "none" || std::string(name) == "fp16" || std::string(name) == "bf16";
        const auto& input = dense ? values : smooth;
        const auto ref = encode_with(isa::Isa::scalar, name, input, options);
        for (isa::Isa path : {isa::Isa::avx2, isa::Isa::avx512}) {
          if (static_cast<int>(path) > static_cast<int>(isa::detected_isa())) continue;
          const auto got = encode_with(path, name, input, options);
          if (std::string(name) == "sign") {  // the scales are float sums in a different order
            BOOST_TEST_REQUIRE(got.first.size() == ref.first.size());
            for (std::size_t i = 0; i < n; ++i)
              BOOST_TEST_REQUIRE(std::fabs(got.second[i] - ref.second[i]) <= 1e-5f * (1 + std::fabs(ref.second[i])));
          } else {
            BOOST_TEST_REQUIRE((got.first == ref.first));
            BOOST_TEST_REQUIRE((got.second == ref.second));
          }
          std::vector<float> a(n, 1.0f), b(n, 1.0f);
          isa::force_isa(isa::Isa::scalar);
          auto codec = codec_named(name, options);
          BOOST_TEST_REQUIRE(to_string(codec->decode(got.first, Span<float>(a), Apply::add)) == "ok");
          isa::force_isa(path);
          BOOST_TEST_REQUIRE(to_string(codec->decode(got.first, Span<float>(b), Apply::add)) == "ok");
          BOOST_TEST_REQUIRE((a == b));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(half_conversion_matches_hardware_exhaustively) {
  IsaGuard guard;
  if (isa::detected_isa() == isa::Isa::scalar) return;
  std::vector<std::uint8_t> payload(8 + 2 * 65536);
  std::vector<std::uint16_t> all(65536);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    // Only finite halves are valid on the wire.
    all[h] = (h & 0x7C00u) == 0x7C00u ? static_cast<std::uint16_t>(h & 0x83FFu) : static_cast<std::uint16_t>(h);
  }
  auto codec = codec_named("fp16");
  std::vector<float> zeros(65536, 0.0f), r(65536, 0.0f), v(65536, 0.0f);
  codec->encode(v, r, payload);
  std::memcpy(payload.data() + 8, all.data(), 2 * 65536);
  for (isa::Isa path : {isa::Isa::scalar, isa::detected_isa()}) {
    isa::force_isa(path);
    std::vector<float> out(65536);
    BOOST_TEST_REQUIRE(to_string(codec->decode(payload, Span<float>(out), Apply::assign)) == "ok");
    for (std::uint32_t h = 0; h < 65536; ++h)
      BOOST_TEST_REQUIRE(simd::scalar::half_to_float(all[h]) == out[h]);
  }
}

BOOST_AUTO_TEST_SUITE_END()
