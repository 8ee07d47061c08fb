// Codec rates as the exchange pays them: the vector is encoded in 1 MiB (fp32) segments, one
// codec stream per segment, as CHOCO-SGD and the compressed all-reduce send it; the wire
// size counts each segment's 48-byte frame header too.
#include "protocols/frame.h"
#include "simulator/median.h"
#include "simulator/probes.h"

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

namespace starling::simulator {
namespace {

constexpr std::size_t kSegmentElements = (std::size_t{1} << 20) / sizeof(float);

std::unique_ptr<protocols::Codec> codec_for(const std::string& name, const protocols::CodecOptions& options) {
  auto made = protocols::make_codec(name, options);
  if (!made) throw std::invalid_argument("codec '" + name + "': " + std::string(protocols::to_string(made.error())));
  return std::move(made.value());
}

}  // namespace

CodecRates measure_codec(const std::string& codec, const protocols::CodecOptions& options, std::size_t elements) {
  CodecRates rates;
  rates.codec = codec;
  if (elements == 0) return rates;
  // Values like a model's change over a step: small, zero-mean, a few large ones.
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.f, 1e-3f);
  std::vector<float> values(elements), residual(elements), decoded(elements);
  for (auto& v : values) v = normal(rng);
  std::vector<std::unique_ptr<protocols::Codec>> streams;
  for (std::size_t lo = 0; lo < elements; lo += kSegmentElements) streams.push_back(codec_for(codec, options));
  std::vector<std::vector<std::uint8_t>> payloads(streams.size());
  std::vector<double> encode, decode;
  const double start = now_seconds();
  while (encode.size() < 3 || (now_seconds() - start < 0.3 && encode.size() < 15)) {
    std::fill(residual.begin(), residual.end(), 0.f);
    double t0 = now_seconds();
    for (std::size_t s = 0, lo = 0; lo < elements; ++s, lo += kSegmentElements) {
      const std::size_t count = std::min(kSegmentElements, elements - lo);
      protocols::Span<const float> in(values.data() + lo, count);
      if (streams[s]->encode(in, protocols::Span<float>(residual.data() + lo, count), payloads[s]) != protocols::Error::ok)
        throw std::invalid_argument("codec '" + codec + "': encode failed");
    }
    encode.push_back((now_seconds() - t0) / elements);
    t0 = now_seconds();
    for (std::size_t s = 0, lo = 0; lo < elements; ++s, lo += kSegmentElements) {
      const std::size_t count = std::min(kSegmentElements, elements - lo);
      (void)streams[s]->decode(protocols::ByteSpan(payloads[s]), protocols::Span<float>(decoded.data() + lo, count),
                               protocols::Apply::add);
    }
    decode.push_back((now_seconds() - t0) / elements);
  }
  rates.encode_seconds_per_element = median(encode);
  rates.decode_seconds_per_element = median(decode);
  for (const auto& p : payloads) rates.wire_bytes += static_cast<double>(p.size() + protocols::kHeaderSize);
  return rates;
}

}  // namespace starling::simulator
