// Codec tests: round trips, error feedback, unbiasedness, format switches, adaptive τ,
// malformed payloads, and agreement of the scalar, AVX2 and AVX-512 paths.
#define BOOST_TEST_MODULE protocols_codecs
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

#include "kernels/cpu_features.h"
#include "protocols/byte_io.h"
#include "protocols/codec.h"
#include "protocols/codecs/powersgd_codec.h"
#include "protocols/codecs/threshold_codec.h"
#include "protocols/simd/scalar_kernels.h"

using namespace starling::protocols;
namespace isa = starling::kernels;

namespace {

const char* const kAllCodecs[] = {"none", "fp16", "bf16", "threshold", "topk", "qsgd", "sign", "powersgd"};

std::vector<float> gaussian(std::size_t n, unsigned seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::unique_ptr<Codec> codec_named(const char* name, CodecOptions options = {}) {
  if (std::string(name) == "threshold") options.tau = 1.0f;
  auto c = make_codec(name, options);
  BOOST_TEST_REQUIRE(c.ok());
  return std::move(*c);
}

std::vector<float> decoded(const Codec& codec, const std::vector<std::uint8_t>& payload, std::size_t n) {
  std::vector<float> out(n, 123.0f);
  BOOST_TEST_REQUIRE(to_string(codec.decode(payload, Span<float>(out), Apply::assign)) == "ok");
  return out;
}

std::string decode_error(const Codec& codec, const std::vector<std::uint8_t>& payload, std::size_t n) {
  std::vector<float> out(n, 7.0f);
  const Error e = codec.decode(payload, Span<float>(out), Apply::add);
  if (e != Error::ok)
    for (float x : out) BOOST_TEST_REQUIRE(x == 7.0f);  // untouched on error
  return std::string(to_string(e));
}

struct IsaGuard {
  ~IsaGuard() { isa::force_isa(isa::detected_isa()); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(round_trips)

BOOST_AUTO_TEST_CASE(error_feedback_identity_every_codec) {
  // decoded + new residual == values + old residual, entry by entry, for every codec.
  for (const char* name : kAllCodecs) {
    BOOST_TEST_CONTEXT(name) {
      for (std::size_t n : {0, 1, 15, 17, 1000, 4099, 40000}) {
        auto codec = codec_named(name);
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
  for (const char* name : kAllCodecs) {
    auto codec = codec_named(name);
    const auto values = gaussian(512, 4);
    std::vector<float> residual(512, 0.0f);
    std::vector<std::uint8_t> payload;
    BOOST_TEST_REQUIRE(to_string(codec->encode(values, residual, payload)) == "ok");
    const auto once = decoded(*codec, payload, 512);
    std::vector<float> acc(512, 1.0f);
    BOOST_TEST_REQUIRE(to_string(codec->decode(payload, Span<float>(acc), Apply::add)) == "ok");
    for (std::size_t i = 0; i < 512; ++i) BOOST_TEST_REQUIRE(acc[i] == 1.0f + once[i]);
  }
}

BOOST_AUTO_TEST_CASE(sum_is_preserved_over_rounds) {
  // After N rounds, Σ decoded + residual equals Σ inputs to rounding.
  const std::size_t n = 3000;
  for (const char* name : kAllCodecs) {
    BOOST_TEST_CONTEXT(name) {
      CodecOptions options;
      options.density = 0.05;
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
    options.tau = 0.5f;
    options.density = 0.0;  // fixed τ
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
  options.tau = 1e-4f;
  options.density = 0.01;
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
  options.tau = 0.1f;
  options.clip = 3.0f;
  options.density = 0.0;
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
  options.tau = 2.576f;  // two-sided 1% quantile of N(0, 1)
  options.density = 0.0;
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
    options.density = 0.01;
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
      options.bits = bits;
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
    options.bits = bits;
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
    options.rank = rank;
    options.rows = rows;
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

BOOST_AUTO_TEST_SUITE(malformed)

// A valid payload of `name` for n entries, then edited.
std::vector<std::uint8_t> payload_of(Codec& codec, std::size_t n, float sigma = 1.0f) {
  const auto values = gaussian(n, 40, sigma);
  std::vector<float> residual(n, 0.0f);
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec.encode(values, residual, payload)) == "ok");
  return payload;
}

BOOST_AUTO_TEST_CASE(common_prefix_checks_every_codec) {
  for (const char* name : kAllCodecs) {
    BOOST_TEST_CONTEXT(name) {
      auto codec = codec_named(name);
      const std::size_t n = 640;
      const auto good = payload_of(*codec, n);
      BOOST_TEST(decode_error(*codec, good, n) == "ok");
      BOOST_TEST(decode_error(*codec, good, n + 1) == "length_mismatch");
      BOOST_TEST(decode_error(*codec, std::vector<std::uint8_t>(good.begin(), good.begin() + 5), n) == "truncated");
      BOOST_TEST(decode_error(*codec, std::vector<std::uint8_t>(good.begin(), good.end() - 1), n) == "truncated");
      auto longer = good;
      longer.push_back(0);
      BOOST_TEST(decode_error(*codec, longer, n) == "oversized");
      auto other = good;
      other[0] = static_cast<std::uint8_t>((other[0] + 1) % kCodecCount);
      BOOST_TEST(decode_error(*codec, other, n) == "codec_mismatch");
      other[0] = 200;
      BOOST_TEST(decode_error(*codec, other, n) == "unknown_codec");
      auto reserved = good;
      reserved[2] = 1;
      BOOST_TEST(decode_error(*codec, reserved, n) == "bad_header");
    }
  }
}

BOOST_AUTO_TEST_CASE(dense_non_finite) {
  for (const char* name : {"none", "fp16", "bf16"}) {
    auto codec = codec_named(name);
    auto p = payload_of(*codec, 100);
    const std::size_t width = std::string(name) == "none" ? 4 : 2;
    std::uint8_t* last = p.data() + 8 + 99 * width;
    if (width == 4) store_le<float>(last, NAN);
    else store_le<std::uint16_t>(last, std::string(name) == "fp16" ? 0x7C00 : 0x7F80);
    BOOST_TEST(decode_error(*codec, p, 100) == "non_finite");
  }
}

BOOST_AUTO_TEST_CASE(threshold_rejections) {
  auto codec = codec_named("threshold");  // τ = 1: about 32% of N(0,1) entries, bitmap
  const std::size_t n = 1000;
  auto bitmap = payload_of(*codec, n);
  BOOST_TEST(bitmap[1] == 1);
  auto bad_code = bitmap;
  bad_code[16] = 0xFF;
  BOOST_TEST(decode_error(*codec, bad_code, n) == "bad_encoding");
  auto bad_count = bitmap;
  store_le<std::uint32_t>(bad_count.data() + 12, load_le<std::uint32_t>(bitmap.data() + 12) - 1);
  BOOST_TEST(decode_error(*codec, bad_count, n) == "bad_encoding");
  auto padding = bitmap;
  padding.back() |= 0x40;  // entry 1003 of a 1000-entry bitmap
  BOOST_TEST(decode_error(*codec, padding, n) == "bad_encoding");

  auto sparse = payload_of(*codec, n, 0.3f);  // ≈ 0.1% over τ = 1... few entries
  BOOST_TEST_REQUIRE(sparse[1] == 0);
  std::vector<std::uint8_t> two(sparse.begin(), sparse.begin() + 16);
  store_le<std::uint32_t>(two.data() + 12, 2);
  auto with = [&](std::int32_t a, std::int32_t b) {
    auto p = two;
    p.resize(24);
    store_le<std::int32_t>(p.data() + 16, a);
    store_le<std::int32_t>(p.data() + 20, b);
    return decode_error(*codec, p, n);
  };
  BOOST_TEST(with(1, -2) == "ok");
  BOOST_TEST(with(0, 5) == "index_out_of_range");
  BOOST_TEST(with(1, 1001) == "index_out_of_range");
  BOOST_TEST(with(1, INT32_MIN) == "index_out_of_range");
  BOOST_TEST(with(5, -5) == "bad_index_order");
  BOOST_TEST(with(7, 3) == "bad_index_order");
  auto bad_tau = two;
  store_le<float>(bad_tau.data() + 8, INFINITY);
  store_le<std::uint32_t>(bad_tau.data() + 12, 0);
  BOOST_TEST(decode_error(*codec, bad_tau, n) == "non_finite");
  store_le<float>(bad_tau.data() + 8, -1.0f);
  BOOST_TEST(decode_error(*codec, bad_tau, n) == "bad_parameter");
  store_le<float>(bad_tau.data() + 8, 1.0f);
  store_le<std::uint32_t>(bad_tau.data() + 12, 0xFFFFFFFFu);
  BOOST_TEST(decode_error(*codec, bad_tau, n) == "bad_parameter");
  bad_tau[1] = 2;
  BOOST_TEST(decode_error(*codec, bad_tau, n) == "bad_parameter");
}

BOOST_AUTO_TEST_CASE(topk_rejections) {
  auto codec = codec_named("topk");
  const std::size_t n = 1000;
  auto p = payload_of(*codec, n);  // k = 10
  const std::uint32_t count = load_le<std::uint32_t>(p.data() + 8);
  BOOST_TEST_REQUIRE(count == 10u);
  auto out_of_range = p;
  store_le<std::uint32_t>(out_of_range.data() + 12 + 4 * 9, 1000);
  BOOST_TEST(decode_error(*codec, out_of_range, n) == "index_out_of_range");
  auto unordered = p;
  store_le<std::uint32_t>(unordered.data() + 12, load_le<std::uint32_t>(p.data() + 16));
  BOOST_TEST(decode_error(*codec, unordered, n) == "bad_index_order");
  auto nan = p;
  store_le<float>(nan.data() + 12 + 40, NAN);
  BOOST_TEST(decode_error(*codec, nan, n) == "non_finite");
  auto huge = p;
  store_le<std::uint32_t>(huge.data() + 8, 0x7FFFFFFF);
  BOOST_TEST(decode_error(*codec, huge, n) == "bad_parameter");
}

BOOST_AUTO_TEST_CASE(quantizer_rejections) {
  const std::size_t n = 1000;
  auto qsgd = codec_named("qsgd");
  auto p = payload_of(*qsgd, n);
  auto level = p;
  level[8 + 4 + 4 * 2 + 5] = 0x80;  // -128 is outside [-127, 127]
  BOOST_TEST(decode_error(*qsgd, level, n) == "bad_encoding");
  auto bits = p;
  bits[1] = 9;
  BOOST_TEST(decode_error(*qsgd, bits, n) == "bad_parameter");
  auto bucket = p;
  store_le<std::uint32_t>(bucket.data() + 8, 0);
  BOOST_TEST(decode_error(*qsgd, bucket, n) == "bad_parameter");
  auto scale = p;
  store_le<float>(scale.data() + 12, NAN);
  BOOST_TEST(decode_error(*qsgd, scale, n) == "non_finite");
  store_le<float>(scale.data() + 12, -1.0f);
  BOOST_TEST(decode_error(*qsgd, scale, n) == "bad_parameter");
  CodecOptions three;
  three.bits = 3;
  auto q3 = codec_named("qsgd", three);
  auto p3 = payload_of(*q3, n);  // 3000 bits: the last 3 bytes hold 8 whole fields
  auto minus4 = p3;
  const std::size_t end = minus4.size();
  minus4[end - 3] = 0x24, minus4[end - 2] = 0x49, minus4[end - 1] = 0x92;  // fields 100 = -4, outside [-3, 3]
  BOOST_TEST(decode_error(*q3, minus4, n) == "bad_encoding");
  auto p3odd = payload_of(*q3, n + 1);  // 3003 bits: 5 padding bits
  p3odd.back() |= 0x80;
  BOOST_TEST(decode_error(*q3, p3odd, n + 1) == "bad_encoding");

  auto sign = codec_named("sign");
  auto s = payload_of(*sign, n + 3);
  auto padding = s;
  padding.back() |= 0x80;
  BOOST_TEST(decode_error(*sign, padding, n + 3) == "bad_encoding");
  auto odd_bucket = s;
  store_le<std::uint32_t>(odd_bucket.data() + 8, 12);
  BOOST_TEST(decode_error(*sign, odd_bucket, n + 3) == "bad_parameter");
}

BOOST_AUTO_TEST_CASE(powersgd_rejections) {
  CodecOptions options;
  options.rows = 20;
  options.rank = 2;
  auto codec = codec_named("powersgd", options);
  const std::size_t n = 1000;
  auto p = payload_of(*codec, n);
  auto rows = p;
  store_le<std::uint32_t>(rows.data() + 8, 25);
  BOOST_TEST(decode_error(*codec, rows, n) == "bad_parameter");
  auto rank = p;
  store_le<std::uint32_t>(rank.data() + 16, 0);
  BOOST_TEST(decode_error(*codec, rank, n) == "bad_parameter");
  store_le<std::uint32_t>(rank.data() + 16, 1000);
  BOOST_TEST(decode_error(*codec, rank, n) == "bad_parameter");
  auto big = p;
  store_le<float>(big.data() + 20, 1e30f);
  store_le<float>(big.data() + 20 + 4 * 2 * 20, 1e30f);
  BOOST_TEST(decode_error(*codec, big, n) == "non_finite");
  std::vector<float> values(999), residual(999);
  std::vector<std::uint8_t> out;
  BOOST_TEST(to_string(codec->encode(values, residual, out)) == "invalid_option");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(factory)

BOOST_AUTO_TEST_CASE(names_and_options) {
  for (const char* name : kAllCodecs) {
    auto c = make_codec(name);
    BOOST_TEST_REQUIRE(c.ok());
    BOOST_TEST(codec_name((*c)->id()) == name);
  }
  BOOST_TEST(to_string(make_codec("zstd").error()) == "unknown_codec");
  CodecOptions bad;
  bad.bits = 9;
  BOOST_TEST(to_string(make_codec("qsgd", bad).error()) == "invalid_option");
  bad = {};
  bad.density = 0.0;
  BOOST_TEST(to_string(make_codec("topk", bad).error()) == "invalid_option");
  bad = {};
  bad.rank = 0;
  BOOST_TEST(to_string(make_codec("powersgd", bad).error()) == "invalid_option");
  bad = {};
  bad.bucket = 12;
  BOOST_TEST(to_string(make_codec("sign", bad).error()) == "invalid_option");
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
        options.density = density;
        options.bits = density > 0.1 ? 8 : 4;
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
