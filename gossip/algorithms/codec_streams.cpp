// Codec checks and per-segment codec streams (gossip/algorithms/codec_streams.h).
#include "gossip/algorithms/codec_streams.h"

#include "gossip/transport/error.h"

namespace starling::gossip {

std::uint64_t stream_seed(std::uint64_t base, PeerId self, std::size_t stream) {
  return base ^ (0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(self) + 1)) ^
         (0xC2B2AE3D27D4EB4Full * (static_cast<std::uint64_t>(stream) + 1));
}

protocols::CodecId checked_codec_id(const std::string& name, const protocols::CodecOptions& options) {
  auto probe = protocols::make_codec(name, options);
  if (!probe)
    STARLING_GOSSIP_THROW(InvalidArgument, "codec '" + name + "': " + std::string(protocols::to_string(probe.error())));
  return probe.value()->id();
}

std::vector<std::unique_ptr<protocols::Codec>> make_codec_streams(const std::string& name,
                                                                  const protocols::CodecOptions& options,
                                                                  PeerId self, std::size_t segments) {
  std::vector<std::unique_ptr<protocols::Codec>> codecs;
  for (std::size_t s = 0; s < segments; ++s) {
    protocols::CodecOptions o = options;
    o.seed = stream_seed(options.seed, self, s);
    auto codec = protocols::make_codec(name, o);
    if (!codec) STARLING_GOSSIP_THROW(InvalidArgument, "codec '" + name + "' rejected its options");
    codecs.push_back(std::move(codec.value()));
  }
  return codecs;
}

}  // namespace starling::gossip
