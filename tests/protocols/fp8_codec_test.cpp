// The fp8 codec (protocols/codecs/fp8_codec.cpp) against a reference in double written from
// the formats' definitions (OCP 8-bit floating point E4M3, OCP Microscaling v1.0's shared
// scale): every payload byte and every residual entry the same, on ragged lengths of values
// spread from float subnormals to float's largest, on constructed rounding ties, and at
// saturation; and the decoded values the reference's.
#define BOOST_TEST_MODULE protocols_fp8_codec
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "codec_test_util.h"
#include "protocols/byte_io.h"

using namespace codec_test;

namespace {

constexpr std::size_t kBlock = 32;

// E4M3's finite magnitudes by code 0x00..0x7E: 2^(E−7)·(1 + m/8), and 2^−6·(m/8) for E = 0.
std::vector<double> e4m3_magnitudes() {
  std::vector<double> v;
  for (int code = 0; code < 0x7F; ++code) {
    const int e = code >> 3, m = code & 7;
    v.push_back(e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7));
  }
  return v;
}

// The code of y: the nearest finite magnitude (on a tie, the one with an even code), at most
// 448, with y's sign bit.
std::uint8_t reference_code(double y) {
  static const std::vector<double> magnitudes = e4m3_magnitudes();
  const double a = std::fabs(y);
  int best = 0;
  for (int c = 1; c < 0x7F; ++c) {
    const double d = std::fabs(magnitudes[c] - a), best_d = std::fabs(magnitudes[best] - a);
    if (d < best_d || (d == best_d && c % 2 == 0)) best = c;
  }
  if (a > 448.0) best = 0x7E;
  return static_cast<std::uint8_t>(best | (std::signbit(y) ? 0x80 : 0));
}

double reference_value(std::uint8_t code) {
  static const std::vector<double> magnitudes = e4m3_magnitudes();
  const double m = magnitudes[code & 0x7F];
  return code & 0x80 ? -m : m;
}

// The block's shared exponent: ⌊log2 max|x|⌋ − 8, in [−127, 119].
int reference_exponent(const float* x, std::size_t n) {
  double largest = 0.0;
  for (std::size_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(static_cast<double>(x[i])));
  if (largest == 0.0) return -127;
  int exponent;
  std::frexp(largest, &exponent);  // largest = f · 2^exponent, f in [0.5, 1)
  return std::clamp(exponent - 1 - 8, -127, 119);
}

struct Encoded {
  std::vector<std::uint8_t> payload;
  std::vector<float> residual;
};

// values + residual (added in float, as every codec does), encoded block by block.
Encoded reference_encode(const std::vector<float>& values, std::vector<float> residual) {
  const std::size_t n = values.size(), blocks = (n + kBlock - 1) / kBlock;
  Encoded out;
  out.payload.assign(8 + blocks + n, 0);
  out.payload[0] = static_cast<std::uint8_t>(codec_row("fp8")->id);
  store_le<std::uint32_t>(out.payload.data() + 4, static_cast<std::uint32_t>(n));
  for (std::size_t i = 0; i < n; ++i) residual[i] += values[i];
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    const int e = reference_exponent(residual.data() + begin, end - begin);
    out.payload[8 + b] = static_cast<std::uint8_t>(e + 127);
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint8_t code = reference_code(std::ldexp(static_cast<double>(residual[i]), -e));
      out.payload[8 + blocks + i] = code;
      residual[i] = static_cast<float>(residual[i] - std::ldexp(reference_value(code), e));
    }
  }
  out.residual = std::move(residual);
  return out;
}

std::vector<double> reference_decode(const std::vector<std::uint8_t>& payload, std::size_t n) {
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = std::ldexp(reference_value(payload[8 + blocks + i]), payload[8 + i / kBlock] - 127);
  return out;
}

// Checks the codec against the reference on values with this residual.
void expect_reference(const std::vector<float>& values, const std::vector<float>& residual) {
  const std::size_t n = values.size();
  const Encoded want = reference_encode(values, residual);
  auto codec = codec_named("fp8");
  std::vector<float> r = residual;
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec->encode(values, r, payload)) == "ok");
  BOOST_TEST_REQUIRE(payload.size() == want.payload.size());
  for (std::size_t i = 0; i < payload.size(); ++i)
    BOOST_TEST_REQUIRE(int(payload[i]) == int(want.payload[i]), "byte " << i);
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(r[i] == want.residual[i], "entry " << i);
  const std::vector<double> ref = reference_decode(payload, n);
  const std::vector<float> out = decoded(*codec, payload, n);
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(static_cast<double>(out[i]) == ref[i], "entry " << i);
  std::vector<float> sum(n, 0.25f);
  BOOST_TEST_REQUIRE(to_string(codec->decode(payload, Span<float>(sum), Apply::add)) == "ok");
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(sum[i] == 0.25f + out[i]);
}

// Gaussians scaled by 2^k, k in [lo, hi] drawn per block or per entry, some zeros.
std::vector<float> spread(std::size_t n, unsigned seed, int lo, int hi, bool per_entry) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(lo, hi);
  std::vector<float> v(n);
  int k = exponent(rng);
  for (std::size_t i = 0; i < n; ++i) {
    if (per_entry || i % kBlock == 0) k = exponent(rng);
    v[i] = rng() % 17 == 0 ? 0.0f : std::ldexp(normal(rng), k);
  }
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(matches_the_reference_on_ragged_lengths_and_wide_ranges) {
  for (std::size_t n : {0, 1, 31, 32, 33, 100, 1000, 4099}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      const auto zero = std::vector<float>(n, 0.0f);
      expect_reference(spread(n, 1 + n, -3, 3, false), zero);       // a model's change
      expect_reference(spread(n, 2 + n, -149, 127, false), zero);   // float's whole range, block by block
      expect_reference(spread(n, 3 + n, -30, 10, true), spread(n, 4 + n, -32, 8, true));  // mixed within blocks
    }
  }
}

BOOST_AUTO_TEST_CASE(ties_round_to_even_and_large_values_saturate) {
  // One block whose largest magnitude is 256 (exponent 0): the values are their own E4M3 inputs.
  const std::vector<float> values = {
      256.0f,           // 2^8: scale exponent 0
      1.0625f,          // between 1 and 1.125: to 1 (even)
      1.1875f,          // between 1.125 and 1.25: to 1.25 (even)
      17.0f,            // between 16 and 18: to 16
      0x1p-10f,         // between 0 and 2^-9: to 0
      3 * 0x1p-10f,     // between 2^-9 and 2^-8: to 2^-8 (code 2)
      -0x1.1p-6f,       // the least normal's neighbourhood, negative
      0x1.08p-7f,       // a subnormal step and a bit: rounds up
      -1e-30f,          // far below the least subnormal: −0
  };
  expect_reference(values, std::vector<float>(values.size(), 0.0f));
  auto codec = codec_named("fp8");
  std::vector<float> r(values.size(), 0.0f);
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(codec->encode(values, r, payload)) == "ok");
  const auto out = decoded(*codec, payload, values.size());
  BOOST_TEST(out[1] == 1.0f);
  BOOST_TEST(out[2] == 1.25f);
  BOOST_TEST(out[3] == 16.0f);
  BOOST_TEST(out[4] == 0.0f);
  BOOST_TEST(out[5] == 0x1p-8f);
  BOOST_TEST(std::signbit(out[8]));
  // −1000 sets the block's exponent to ⌊log2 1000⌋ − 8 = 1; −1000 / 2 = −500 saturates at −448.
  const std::vector<float> big = {500.0f, -1000.0f, 3.0f};
  r.assign(3, 0.0f);
  BOOST_TEST_REQUIRE(to_string(codec->encode(big, r, payload)) == "ok");
  const auto sat = decoded(*codec, payload, 3);
  BOOST_TEST(sat[0] == 512.0f);           // 500 / 2 = 250, nearer 256 than 240
  BOOST_TEST(sat[1] == -896.0f);
  BOOST_TEST(r[1] == -1000.0f + 896.0f);  // what saturation took waits in the residual
  expect_reference(big, std::vector<float>(3, 0.0f));
}

BOOST_AUTO_TEST_CASE(a_block_with_a_nan_or_infinity_cannot_travel) {
  auto codec = codec_named("fp8");
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    std::vector<float> values(40, 1.0f), r(40, 0.0f);
    values[35] = bad;
    std::vector<std::uint8_t> payload;
    BOOST_TEST_REQUIRE(to_string(codec->encode(values, r, payload)) == "ok");
    BOOST_TEST(decode_error(*codec, payload, 40) == "non_finite");
    BOOST_TEST(r[0] == 0.0f);  // the first block went out
  }
}

BOOST_AUTO_TEST_CASE(the_largest_floats_stay_finite) {
  const std::vector<float> values = {FLT_MAX, -FLT_MAX, FLT_MAX / 3};
  expect_reference(values, std::vector<float>(3, 0.0f));
}
