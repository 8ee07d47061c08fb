#pragma once
// Ring all-gather of codec payloads whose sizes differ from peer to peer: a vector is cut
// into segments, every peer contributes one payload per segment, and after run() every
// peer holds every peer's payloads. p−1 steps: step 0 sends this peer's own payloads to the
// right neighbour and each later step forwards what the left one sent in the step before,
// so every payload travels p−1 hops and each peer sends p−1 payloads per segment.
//
// Frames are allreduce_segment with kFlagAllGather, the codec id, the round and the
// segment's element range; the origin of a payload follows from its step, as the link from
// the left neighbour keeps order. Each payload is checked by decoding it before it is kept
// or forwarded; a bad one is dropped and counted (drops()), so its round ends in
// TimeoutError rather than with peers holding different payloads. Messages of a later
// round are buffered, stale and unexpected ones dropped and counted.
//
// Contract as AllreduceRing: `ring` lists the peer ids in ring order and contains the
// transport's own id, the right neighbour is connected and the left one accepted, and all
// peers call run() in lockstep with the same length; the transport carries nothing else
// meanwhile. run() throws TimeoutError past options.timeout.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::gossip {

struct RingAllgatherOptions {
  std::size_t segment_bytes = 1 << 20;       // fp32 bytes (uncompressed) per segment
  std::chrono::milliseconds timeout{60000};  // for one run()
  std::uint64_t first_round = 0;  // header round of the first run(); later runs count up
};

class RingAllgather {
 public:
  /// InvalidArgument for an unknown codec, or as RingPosition for the ring.
  RingAllgather(Transport& transport, std::vector<PeerId> ring, std::size_t length, protocols::CodecId codec,
                RingAllgatherOptions options = {});

  std::size_t segments() const { return segments_; }
  std::size_t segment_begin(std::size_t s) const { return s * per_segment_; }
  std::size_t segment_size(std::size_t s) const;
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Sends own[s], this peer's payload for segment s (one per segment), and gathers the
  /// other peers'. InvalidArgument when own has another number of payloads.
  void run(const std::vector<std::vector<std::uint8_t>>& own);

  /// Segment s's payload from the peer at rank (not this peer's own) of the last run().
  protocols::ByteSpan received(int rank, std::size_t s) const { return held_[rank][s].bytes(); }

  const std::map<std::string, std::uint64_t>& drops() const { return drops_; }

 private:
  protocols::FrameHeader header(std::size_t s, std::uint64_t round) const;
  Message receive(std::size_t s, std::uint64_t round, Transport::Clock::time_point deadline);
  std::string_view reject_reason(const Message& m, std::size_t s, std::uint64_t round);

  Transport& transport_;
  int size_ = 1;
  int rank_ = 0;
  PeerId left_ = 0;
  PeerId right_ = 0;
  std::size_t length_ = 0;
  std::size_t per_segment_ = 1;
  std::size_t segments_ = 1;
  protocols::CodecId codec_id_;
  std::unique_ptr<protocols::Codec> checker_;  // decodes payloads to validate them
  RingAllgatherOptions options_;
  std::uint64_t round_ = 0;
  std::vector<float> scratch_;                // one segment, where checking decodes to
  std::vector<std::vector<Message>> held_;    // [rank][segment]
  std::deque<Message> early_;                 // messages of a later round
  std::map<std::string, std::uint64_t> drops_;
};

}  // namespace starling::gossip
