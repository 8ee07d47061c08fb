// Ring all-gather of per-peer codec payloads (gossip/algorithms/ring_allgather.h).
#include "gossip/algorithms/ring_allgather.h"

#include <algorithm>
#include <utility>

#include "gossip/algorithms/float_segments.h"
#include "gossip/transport/error.h"
#include "gossip/transport/ring_common.h"

namespace starling::gossip {

RingAllgather::RingAllgather(Transport& transport, std::vector<PeerId> ring, std::size_t length,
                             protocols::CodecId codec, RingAllgatherOptions options)
    : transport_(transport),
      length_(length),
      per_segment_(std::max<std::size_t>(1, options.segment_bytes / sizeof(float))),
      codec_id_(codec),
      options_(options),
      round_(options.first_round) {
  const RingPosition at = ring_position(transport_, ring);
  size_ = at.size;
  rank_ = at.rank;
  left_ = at.left;
  right_ = at.right;
  segments_ = segment_count(length_, per_segment_);
  auto checker = protocols::make_codec(codec);
  if (!checker) STARLING_GOSSIP_THROW(InvalidArgument, "all-gather of an unknown codec");
  checker_ = std::move(checker.value());
  scratch_.resize(std::min(per_segment_, length_));
  held_.resize(static_cast<std::size_t>(size_));
  for (auto& payloads : held_) payloads.resize(segments_);
}

std::size_t RingAllgather::segment_size(std::size_t s) const {
  const std::size_t begin = segment_begin(s);
  return std::min(per_segment_, length_ - std::min(begin, length_));
}

protocols::FrameHeader RingAllgather::header(std::size_t s, std::uint64_t round) const {
  protocols::FrameHeader h;
  h.type = protocols::MessageType::allreduce_segment;
  h.codec = codec_id_;
  h.flags = protocols::kFlagAllGather;
  h.round = round;
  h.tensor_offset = segment_begin(s);
  h.tensor_length = segment_size(s);
  return h;
}

void RingAllgather::run(const std::vector<std::vector<std::uint8_t>>& own) {
  if (own.size() != segments_)
    STARLING_GOSSIP_THROW(InvalidArgument, "expected " + std::to_string(segments_) + " payloads, got " +
                                               std::to_string(own.size()));
  const std::uint64_t round = round_++;
  if (size_ == 1) return;
  const auto deadline = Transport::Clock::now() + options_.timeout;
  for (std::size_t s = 0; s < segments_; ++s)
    transport_.send(right_, header(s, round), protocols::ByteSpan(own[s].data(), own[s].size()));
  // Step t brings the payloads of the peer t + 1 places to the left; all but the last
  // step's go on to the right at once, segment by segment.
  for (int step = 0; step + 1 < size_; ++step) {
    const int origin = ((rank_ - 1 - step) % size_ + size_) % size_;
    for (std::size_t s = 0; s < segments_; ++s) {
      Message m = receive(s, round, deadline);
      if (step + 2 < size_) transport_.send(right_, header(s, round), m.bytes());
      held_[static_cast<std::size_t>(origin)][s] = std::move(m);
    }
  }
}

// The left neighbour's next payload for segment s of this round, checked by decoding it.
Message RingAllgather::receive(std::size_t s, std::uint64_t round, Transport::Clock::time_point deadline) {
  for (;;) {
    Message m = next_message(early_, round, transport_, deadline);
    const std::string_view reason = reject_reason(m, s, round);
    if (reason.empty()) return m;
    if (reason == "later_round" && early_.size() < kMaxEarlyMessages)
      early_.push_back(std::move(m));
    else
      ++drops_[std::string(reason)];
  }
}

// Why m is not the payload expected next; empty if it is.
std::string_view RingAllgather::reject_reason(const Message& m, std::size_t s, std::uint64_t round) {
  const protocols::FrameHeader& h = m.header;
  if (m.from != left_ || h.type != protocols::MessageType::allreduce_segment) return "unexpected_message";
  if (h.round > round) return "later_round";
  if (h.round < round) return "stale_round";
  if (h.flags != protocols::kFlagAllGather || h.codec != codec_id_ || h.tensor_offset != segment_begin(s) ||
      h.tensor_length != segment_size(s))
    return "unexpected_message";
  const protocols::Error e = checker_->decode(m.bytes(), {scratch_.data(), segment_size(s)}, protocols::Apply::assign);
  return e == protocols::Error::ok ? std::string_view() : protocols::to_string(e);
}

}  // namespace starling::gossip
