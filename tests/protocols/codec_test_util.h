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
#include "protocols/codec_row.h"
using namespace starling::protocols;
namespace isa = starling::platform;

namespace codec_test {

/// Every codec's name, from the codec rows.
inline std::vector<std::string> all_codecs() {
  std::vector<std::string> names;
  for (const CodecRow* row : codec_rows()) names.emplace_back(row->name);
  return names;
}

/// Every sample of every codec row: its codec's name, its label and its options.
struct Sample {
  std::string codec, label;
  CodecOptions options;
};
inline std::vector<Sample> all_samples() {
  std::vector<Sample> all;
  for (const CodecRow* row : codec_rows())
    for (const CodecSample& s : row->samples) all.push_back({std::string(row->name), std::string(s.label), s.options()});
  return all;
}

inline std::vector<float> gaussian(std::size_t n, unsigned seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::unique_ptr<Codec> codec_named(const std::string& name, CodecOptions options = {}) {
  if (name == "threshold" && !options.find("tau")) options.set("tau", 1.0);
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
