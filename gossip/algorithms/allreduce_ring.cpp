// Segmented, pipelined ring all-reduce computing the mean (gossip/algorithms/allreduce_ring.h).
#include "gossip/algorithms/allreduce_ring.h"

#include <algorithm>
#include <cstring>

#include "gossip/algorithms/float_segments.h"
#include "gossip/transport/error.h"
#include "gossip/transport/ring_common.h"
#include "protocols/codec_row.h"
#include "protocols/crc32c.h"

namespace starling::gossip {

AllreduceRing::AllreduceRing(Transport& transport, std::vector<PeerId> ring, protocols::Span<float> data,
                             AllreduceOptions options)
    : transport_(transport), ring_(std::move(ring)), data_(data), options_(options), round_(options.first_round) {
  const RingPosition at = ring_position(transport_, ring_);
  size_ = at.size;
  rank_ = at.rank;
  left_ = at.left;
  right_ = at.right;
  const std::size_t per_segment = std::max<std::size_t>(1, options_.segment_bytes / sizeof(float));
  segments_.resize(size_);
  for (int c = 0; c < size_; ++c)
    for (std::size_t b = chunk_begin(c), end = chunk_begin(c + 1); b < end; b += per_segment)
      segments_[c].push_back({b, std::min(per_segment, end - b)});
  if (options_.wire != protocols::CodecId::none) {
    const protocols::CodecRow* row = protocols::codec_row(options_.wire);
    if (!row || row->route != protocols::AllreduceRoute::ring)
      STARLING_GOSSIP_THROW(InvalidArgument, "the ring's wire format must be a codec whose entries decode on their own "
                                             "(route ring in protocols/codec_row.h)");
    auto codec = protocols::make_codec(options_.wire, options_.wire_options);
    if (!codec) STARLING_GOSSIP_THROW(InvalidArgument, "the ring's wire format rejected its options");
    codec_ = std::move(codec.value());
    rounding_.resize(std::min(per_segment, data_.size()));
  }
}

// Balanced split: chunk sizes differ by at most one element; some are empty when N < p.
std::size_t AllreduceRing::chunk_begin(std::size_t chunk) const {
  return static_cast<std::size_t>(static_cast<unsigned __int128>(chunk) * data_.size() / size_);
}

// The chunk this peer sends at a step; it receives chunk_at(step + 1) during that step.
int AllreduceRing::chunk_at(int step) const { return ((rank_ - step) % size_ + size_) % size_; }

void AllreduceRing::run() { run({}); }

void AllreduceRing::run(protocols::Span<float> residual) {
  if (!residual.empty() && residual.size() != data_.size())
    STARLING_GOSSIP_THROW(InvalidArgument, "residual length differs from the data's");
  const std::uint64_t round = round_;
  round_ += options_.round_stride;
  if (size_ == 1) return;  // the mean of one vector is itself
  residual_ = residual;
  const auto deadline = Transport::Clock::now() + options_.timeout;
  const int steps = 2 * (size_ - 1);

  // Step 0 sends this peer's own chunk: every segment can go out at once.
  const Message nothing_received;
  for (const Segment& s : segments_[chunk_at(0)]) send_segment(0, s, round, nothing_received, 0);

  for (int step = 0; step < steps; ++step) {
    // Receive the left neighbour's chunk segment by segment. Steps 0..p-2 add it into ours
    // (the last of them also divides by p: that chunk is now final here and nowhere else);
    // steps p-1..2p-3 copy final chunks. Whatever arrives is exactly what the next step
    // sends, so each segment is forwarded at once and the ring never idles on a whole chunk.
    for (const Segment& s : segments_[chunk_at(step + 1)]) {
      std::uint32_t crc = 0;  // of the segment as it now stands in data_ (fp32)
      const Message m = receive_segment(step, s, round, deadline, crc);  // already absorbed
      if (step + 1 < steps) send_segment(step + 1, s, round, m, crc);
    }
  }
  wait_for_sends(deadline);
}

// ZeroMQ keeps the segments queued for a neighbour that died: the transport's hook runs
// between slices of the wait, so the death ends the round as a membership change instead of
// holding it (and hiding the death) until the deadline.
void AllreduceRing::wait_for_sends(Transport::Clock::time_point deadline) {
  constexpr auto kSlice = std::chrono::milliseconds(50);
  while (!fence_.wait_until(std::min(deadline, Transport::Clock::now() + kSlice))) {
    if (Transport::Clock::now() >= deadline) fence_.wait(deadline);  // TimeoutError, with the count
    transport_.idle();
  }
}

void AllreduceRing::send_segment(int step, const Segment& s, std::uint64_t round, const Message& received,
                                 std::uint32_t crc) {
  protocols::FrameHeader h;
  h.type = protocols::MessageType::allreduce_segment;
  h.codec = options_.wire;
  h.flags = step >= size_ - 1 ? protocols::kFlagAllGather : 0;
  h.round = round;
  h.tensor_offset = s.begin;
  h.tensor_length = s.count;
  // fp32 segments go out of data_ itself: a segment sent at step t is next written at step
  // t + p - 1, after its sum has come round the ring, so the right neighbour has long
  // read it; run() waits for the transport to let go of the last ones before it returns.
  // After step 0 the segment's CRC is known already (taken as it was computed, or the
  // received one for a copy), so it is not read again.
  if (!codec_) {
    Payload payload = fence_.lend(data_.data() + s.begin, s.count * sizeof(float));
    if (step == 0) return transport_.send(right_, h, std::move(payload));
    h.payload_crc = crc;
    return transport_.send_checksummed(right_, h, std::move(payload));
  }
  // All-gather steps after the owner's pass its rounded chunk on as it came.
  if (step >= size_) return transport_.send(right_, h, received.bytes());
  transport_.send(right_, h, round_to_wire(step, s));
}

// A partial sum (reduce-scatter) or the owner's mean (step p-1) in the wire format. The
// owner takes the rounded mean itself; the rounding error goes to the residual, the mean's
// scaled by p to units of the sum.
protocols::ByteSpan AllreduceRing::round_to_wire(int step, const Segment& s) {
  const protocols::Span<float> values(data_.data() + s.begin, s.count);
  const protocols::Span<float> rounding(rounding_.data(), s.count);
  std::fill(rounding.begin(), rounding.end(), 0.0f);
  codec_->encode(values, rounding, encoded_);  // sizes match: cannot fail
  const bool owner = step == size_ - 1;
  if (owner && codec_->decode({encoded_.data(), encoded_.size()}, values, protocols::Apply::assign) !=
                   protocols::Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "a non-finite value cannot travel in the ring's narrow wire format");
  if (!residual_.empty()) {
    const float scale = owner ? static_cast<float>(size_) : 1.0f;
    for (std::size_t i = 0; i < s.count; ++i) residual_[s.begin + i] += scale * rounding[i];
  }
  return {encoded_.data(), encoded_.size()};
}

bool AllreduceRing::matches(const Message& m, int step, const Segment& s, std::uint64_t round) {
  const protocols::FrameHeader& h = m.header;
  const std::uint8_t phase = step >= size_ - 1 ? protocols::kFlagAllGather : 0;
  return m.from == left_ && h.type == protocols::MessageType::allreduce_segment && h.round == round &&
         h.flags == phase && h.codec == options_.wire && h.tensor_offset == s.begin && h.tensor_length == s.count &&
         (codec_ || m.payload.size() == s.count * sizeof(float));  // the codec checks its own sizes
}

Message AllreduceRing::receive_segment(int step, const Segment& s, std::uint64_t round,
                                       Transport::Clock::time_point deadline, std::uint32_t& crc) {
  for (;;) {
    Message m = next_message(early_, round, transport_, deadline);
    if (matches(m, step, s, round)) {
      const protocols::Error e = absorb(step, s, m, crc);
      if (e == protocols::Error::ok) return m;
      ++drops_[std::string(protocols::to_string(e))];
      continue;
    }
    const bool ours = m.from == left_ && m.header.type == protocols::MessageType::allreduce_segment;
    if (ours && m.header.round > round && early_.size() < kMaxEarlyMessages)
      early_.push_back(std::move(m));
    else if (ours && m.header.round < round)
      ++drops_["stale_round"];
    else
      ++drops_["unexpected_message"];
  }
}

// Adds a partial sum (the last reduce-scatter step also divides by p) or copies a final
// chunk. A narrow segment is validated before it touches data; its error is returned. An
// fp32 segment's new CRC goes to crc.
protocols::Error AllreduceRing::absorb(int step, const Segment& s, const Message& m, std::uint32_t& crc) {
  float* dst = data_.data() + s.begin;
  if (codec_) {
    const bool final_chunk = step >= size_ - 1;
    const protocols::Error e =
        codec_->decode(m.bytes(), {dst, s.count}, final_chunk ? protocols::Apply::assign : protocols::Apply::add);
    if (e != protocols::Error::ok || step != size_ - 2) return e;
    const float p = static_cast<float>(size_);
    for (std::size_t i = 0; i < s.count; ++i) dst[i] /= p;  // the same (partial + v) / p as fp32
    return e;
  }
  const auto* src = static_cast<const unsigned char*>(m.payload.data());
  if (step >= size_ - 1) {
    std::memcpy(dst, src, s.count * sizeof(float));
    crc = m.header.payload_crc;  // the same bytes
    return protocols::Error::ok;
  }
  crc = reduce_fp32(dst, src, s.count, step == size_ - 2);
  return protocols::Error::ok;
}

// dst += src, or at the owner's step dst = (dst + src) / p, block by block; each block's
// CRC is taken while it is still in L1, so forwarding the result costs no second pass.
// Payload frames need not be 4-byte aligned: src floats are loaded through memcpy.
std::uint32_t AllreduceRing::reduce_fp32(float* dst, const unsigned char* src, std::size_t count, bool owner) const {
  constexpr std::size_t kBlock = 2048;  // floats: 8 KiB
  const float p = static_cast<float>(size_);
  std::uint32_t crc = 0;
  for (std::size_t b = 0; b < count; b += kBlock) {
    const std::size_t end = std::min(count, b + kBlock);
    if (owner) {
      for (std::size_t i = b; i < end; ++i) dst[i] = (dst[i] + load_float(src, i)) / p;
    } else {
      for (std::size_t i = b; i < end; ++i) dst[i] += load_float(src, i);
    }
    crc = protocols::crc32c(dst + b, (end - b) * sizeof(float), crc);
  }
  return crc;
}

}  // namespace starling::gossip
