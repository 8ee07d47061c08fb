// Segmented, pipelined ring all-reduce computing the mean (gossip/allreduce_ring.h).
#include "gossip/allreduce_ring.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "gossip/error.h"

namespace starling::gossip {

namespace {

constexpr std::size_t kMaxEarly = 1u << 16;  // bound on buffered messages of a later round

protocols::ByteSpan bytes_of(const float* p, std::size_t count) {
  return {reinterpret_cast<const std::uint8_t*>(p), count * sizeof(float)};
}

}  // namespace

AllreduceRing::AllreduceRing(Transport& transport, std::vector<PeerId> ring, protocols::Span<float> data,
                             AllreduceOptions options)
    : transport_(transport), ring_(std::move(ring)), data_(data), options_(options), round_(options.first_round) {
  size_ = static_cast<int>(ring_.size());
  const auto self = std::find(ring_.begin(), ring_.end(), transport_.self());
  if (self == ring_.end()) STARLING_GOSSIP_THROW(InvalidArgument, "own peer id is not in the ring");
  if (std::set<PeerId>(ring_.begin(), ring_.end()).size() != ring_.size())
    STARLING_GOSSIP_THROW(InvalidArgument, "ring lists a peer twice");
  rank_ = static_cast<int>(self - ring_.begin());
  left_ = ring_[(rank_ + size_ - 1) % size_];
  right_ = ring_[(rank_ + 1) % size_];
  if (size_ > 1 && !transport_.connected_to(right_))
    STARLING_GOSSIP_THROW(InvalidArgument, "not connected to right neighbour " + std::to_string(right_));
  const std::size_t per_segment = std::max<std::size_t>(1, options_.segment_bytes / sizeof(float));
  segments_.resize(size_);
  for (int c = 0; c < size_; ++c)
    for (std::size_t b = chunk_begin(c), end = chunk_begin(c + 1); b < end; b += per_segment)
      segments_[c].push_back({b, std::min(per_segment, end - b)});
}

// Balanced split: chunk sizes differ by at most one element; some are empty when N < p.
std::size_t AllreduceRing::chunk_begin(std::size_t chunk) const {
  return static_cast<std::size_t>(static_cast<unsigned __int128>(chunk) * data_.size() / size_);
}

// The chunk this peer sends at a step; it receives chunk_at(step + 1) during that step.
int AllreduceRing::chunk_at(int step) const { return ((rank_ - step) % size_ + size_) % size_; }

void AllreduceRing::run() {
  const std::uint64_t round = round_++;
  if (size_ == 1) return;  // the mean of one vector is itself
  const auto deadline = Transport::Clock::now() + options_.timeout;
  const int steps = 2 * (size_ - 1);

  // Step 0 sends this peer's own chunk: every segment can go out at once.
  for (const Segment& s : segments_[chunk_at(0)]) send_segment(0, s, round);

  for (int step = 0; step < steps; ++step) {
    // Receive the left neighbour's chunk segment by segment. Steps 0..p-2 add it into ours
    // (the last of them also divides by p: that chunk is now final here and nowhere else);
    // steps p-1..2p-3 copy final chunks. Whatever arrives is exactly what the next step
    // sends, so each segment is forwarded at once and the ring never idles on a whole chunk.
    for (const Segment& s : segments_[chunk_at(step + 1)]) {
      const Message m = receive_segment(step, s, round, deadline);
      absorb(step, s, m);
      if (step + 1 < steps) send_segment(step + 1, s, round);
    }
  }
}

void AllreduceRing::send_segment(int step, const Segment& s, std::uint64_t round) {
  protocols::FrameHeader h;
  h.type = protocols::MessageType::allreduce_segment;
  h.flags = step >= size_ - 1 ? protocols::kFlagAllGather : 0;
  h.round = round;
  h.tensor_offset = s.begin;
  h.tensor_length = s.count;
  transport_.send(right_, h, bytes_of(data_.data() + s.begin, s.count));
}

bool AllreduceRing::matches(const Message& m, int step, const Segment& s, std::uint64_t round) {
  const protocols::FrameHeader& h = m.header;
  const std::uint8_t phase = step >= size_ - 1 ? protocols::kFlagAllGather : 0;
  return m.from == left_ && h.type == protocols::MessageType::allreduce_segment && h.round == round &&
         h.flags == phase && h.tensor_offset == s.begin && h.tensor_length == s.count &&
         m.payload.size() == s.count * sizeof(float);
}

Message AllreduceRing::receive_segment(int step, const Segment& s, std::uint64_t round,
                                       Transport::Clock::time_point deadline) {
  for (;;) {
    Message m;
    if (!early_.empty() && early_.front().header.round == round) {
      m = std::move(early_.front());
      early_.pop_front();
    } else {
      m = transport_.receive(deadline);
    }
    if (matches(m, step, s, round)) return m;
    const bool ours = m.from == left_ && m.header.type == protocols::MessageType::allreduce_segment;
    if (ours && m.header.round > round && early_.size() < kMaxEarly)
      early_.push_back(std::move(m));
    else if (ours && m.header.round < round)
      ++drops_["stale_round"];
    else
      ++drops_["unexpected_message"];
  }
}

void AllreduceRing::absorb(int step, const Segment& s, const Message& m) {
  float* dst = data_.data() + s.begin;
  const auto* src = static_cast<const unsigned char*>(m.payload.data());
  if (step >= size_ - 1) {
    std::memcpy(dst, src, s.count * sizeof(float));
    return;
  }
  // Payload frames need not be 4-byte aligned: load each float through memcpy.
  if (step < size_ - 2) {
    for (std::size_t i = 0; i < s.count; ++i) {
      float v;
      std::memcpy(&v, src + i * sizeof(float), sizeof v);
      dst[i] += v;
    }
    return;
  }
  const float p = static_cast<float>(size_);
  for (std::size_t i = 0; i < s.count; ++i) {
    float v;
    std::memcpy(&v, src + i * sizeof(float), sizeof v);
    dst[i] = (dst[i] + v) / p;
  }
}

}  // namespace starling::gossip
