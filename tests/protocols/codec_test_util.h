#pragma once
// Shared helpers of the codec test suites: random data, codecs by name, decoding checks.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "platform/cpu_features.h"
#include "protocols/codec.h"
using namespace starling::protocols;
namespace isa = starling::platform;

namespace codec_test {

inline const char* const kAllCodecs[] = {"none", "fp16", "bf16", "threshold", "topk", "qsgd", "sign", "powersgd"};

inline std::vector<float> gaussian(std::size_t n, unsigned seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::unique_ptr<Codec> codec_named(const char* name, CodecOptions options = {}) {
  if (std::string(name) == "threshold") options.tau = 1.0f;
  auto c = make_codec(name, options);
  BOOST_TEST_REQUIRE(c.ok());
  return std::move(*c);
}

inline std::vector<float> decoded(const Codec& codec, const std::vector<std::uint8_t>& payload, std::size_t n) {
  std::vector<float> out(n, 123.0f);
  BOOST_TEST_REQUIRE(to_string(codec.decode(payload, Span<float>(out), Apply::assign)) == "ok");
  return out;
}

inline std::string decode_error(const Codec& codec, const std::vector<std::uint8_t>& payload, std::size_t n) {
  std::vector<float> out(n, 7.0f);
  const Error e = codec.decode(payload, Span<float>(out), Apply::add);
  if (e != Error::ok)
    for (float x : out) BOOST_TEST_REQUIRE(x == 7.0f);  // untouched on error
  return std::string(to_string(e));
}

struct IsaGuard {
  ~IsaGuard() { isa::force_isa(isa::detected_isa()); }
};

}  // namespace codec_test
