#pragma once
// Codec set-up shared by the compressed exchanges (CHOCO gossip, compressed all-reduce):
// checking a codec name and its options once, and one codec stream per segment with its
// own seed, so that peers and segments do not make correlated compression errors.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gossip/transport/message.h"
#include "protocols/codec.h"

namespace starling::gossip {

/// The wire id of codec `name`; InvalidArgument for an unknown name or bad options.
protocols::CodecId checked_codec_id(const std::string& name, const protocols::CodecOptions& options);

/// The seed of a peer's codec stream: options.seed mixed with the peer and the stream's index.
std::uint64_t stream_seed(std::uint64_t base, PeerId self, std::size_t stream);

/// One codec per segment, seeded from options.seed, the peer and the segment index.
/// InvalidArgument if the codec rejects its options.
std::vector<std::unique_ptr<protocols::Codec>> make_codec_streams(const std::string& name,
                                                                  const protocols::CodecOptions& options,
                                                                  PeerId self, std::size_t segments);

}  // namespace starling::gossip
