// Every codec decoder against malformed payloads: each is rejected with the right error and
// leaves the destination untouched.
#define BOOST_TEST_MODULE protocols_codec_malformed
#include <boost/test/unit_test.hpp>

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
  for (const std::string& name : all_codecs()) {
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
      other[0] = static_cast<std::uint8_t>(name == "none" ? codec_row("fp16")->id : CodecId::none);
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

BOOST_AUTO_TEST_CASE(topk_two_bit_rejections) {
  CodecOptions options;
  options.set("value_bits", 2);
  auto codec = codec_named("topk", options);
  const std::size_t n = 1000;
  auto p = payload_of(*codec, n);  // k = 10: 40 bytes of indices, two magnitudes, 3 bytes of codes
  BOOST_TEST_REQUIRE(load_le<std::uint32_t>(p.data() + 8) == 10u);
  BOOST_TEST_REQUIRE(p.size() == 12 + 40 + 8 + 3u);
  auto nan = p;
  store_le<float>(nan.data() + 52, NAN);
  BOOST_TEST(decode_error(*codec, nan, n) == "non_finite");
  auto negative = p;
  store_le<float>(negative.data() + 56, -1.0f);
  BOOST_TEST(decode_error(*codec, negative, n) == "bad_parameter");
  auto padding = p;
  padding.back() |= 0x80;  // codes 10 and 11 of the last byte do not exist
  BOOST_TEST(decode_error(*codec, padding, n) == "bad_encoding");
  auto short_payload = p;
  short_payload.pop_back();
  BOOST_TEST(decode_error(*codec, short_payload, n) == "truncated");
  auto format = p;
  format[1] = 3;
  BOOST_TEST(decode_error(*codec, format, n) == "bad_parameter");
  BOOST_TEST(!make_codec("topk", [] { CodecOptions o; o.set("value_bits", 4); return o; }()).ok());
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
  three.set("bits", 3);
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
  options.set("rows", 20);
  options.set("rank", 2);
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

BOOST_AUTO_TEST_CASE(fp8_rejections) {
  auto codec = codec_named("fp8");
  const std::size_t n = 100;  // 4 blocks: 4 scale bytes, then 100 codes
  auto p = payload_of(*codec, n);
  BOOST_TEST_REQUIRE(p.size() == 8 + 4 + n);
  for (std::uint8_t nan : {0x7F, 0xFF}) {
    auto code = p;
    code[8 + 4 + 50] = nan;  // E4M3's NaNs
    BOOST_TEST(decode_error(*codec, code, n) == "non_finite");
  }
  auto scale = p;
  scale[8 + 2] = 255;  // E8M0's NaN
  BOOST_TEST(decode_error(*codec, scale, n) == "non_finite");
  scale[8 + 2] = 247;  // 448 · 2^120 is no float
  BOOST_TEST(decode_error(*codec, scale, n) == "bad_parameter");
  scale[8 + 2] = 246;
  BOOST_TEST(decode_error(*codec, scale, n) == "ok");
  auto format = p;
  format[1] = 1;
  BOOST_TEST(decode_error(*codec, format, n) == "bad_parameter");
}

BOOST_AUTO_TEST_SUITE_END()
