#pragma once
// Ring all-reduce (mean) over a Transport, in the manner of Gloo's allreduce_ring: the
// constructor lays out chunks and segments once, run() is only the loop. p peers split the
// vector into p chunks; 2(p-1) steps send one chunk to the right neighbour and take one
// from the left (p-1 reduce-scatter steps adding it, p-1 all-gather steps copying it).
// Chunks travel in segments so sending, receiving and reducing overlap; fp32 segments are
// sent from data itself without a copy (gossip/transport/send_fence.h). Each chunk's mean
// is computed by one peer only and then copied, so all peers end with identical bits.
//
// Narrow wire (options.wire: a codec of route ring, protocols/codec_row.h, such as fp16,
// bf16, or qsgd at its option bits, 2–8): segments travel as that codec's payloads (half the
// size, or bits/32 of it plus a scale per bucket), and are added in fp32; the owner of a chunk rounds its mean to the wire
// format and keeps the rounded value itself, so all peers still end with identical bits,
// equal to the fp32 mean within the format's rounding of each partial sum and of the mean.
// run(residual) adds the rounding errors this peer made to residual, scaled to units of
// the sum, so a caller that adds it to its next input loses nothing (error feedback).
// This is INTELLECT-1's int8 all-reduce: every hop dequantizes, adds and quantizes again.
//
// Contract: `ring` lists the peer ids in ring order and contains the transport's own id;
// the transport is connected to the right neighbour and accepts the left one from before
// that one starts sending (TransportOptions::accept), and carries no other traffic while
// run() executes. All peers call run() the same number
// of times with equal element counts. run() throws TimeoutError past options.timeout; after
// that, data must outlive the transport (ZeroMQ may still be sending from it).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gossip/transport/message.h"
#include "gossip/transport/send_fence.h"
#include "gossip/transport/transport.h"
#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::gossip {

struct AllreduceOptions {
  // Pipelining unit: 1 MiB measured 25–35% faster than 256 KiB on loopback (fewer wakeups).
  std::size_t segment_bytes = 1 << 20;
  std::chrono::milliseconds timeout{60000};  // for one run()
  std::uint64_t first_round = 0;  // header round of the first run(); later runs count up
  std::uint64_t round_stride = 1;  // by this much (rings sharing a transport interleave rounds)
  protocols::CodecId wire = protocols::CodecId::none;  // none (fp32) or a codec of route ring
  protocols::CodecOptions wire_options;  // qsgd: bits, bucket and this peer's rounding seed
};

class AllreduceRing {
 public:
  /// InvalidArgument when self is missing from ring, ring has duplicates, the right
  /// neighbour is not connected, or the wire is not none or a valid codec of route ring.
  AllreduceRing(Transport& transport, std::vector<PeerId> ring, protocols::Span<float> data,
                AllreduceOptions options = {});

  /// Replaces data with the element-wise mean over all peers.
  void run();
  /// As run(); with a narrow wire, also adds this peer's rounding errors (in units of the
  /// sum) to residual, which has data's length (InvalidArgument otherwise).
  void run(protocols::Span<float> residual);

  /// Where the narrow wire's random rounding stands (protocols::Codec::draws; 0 for fp32).
  std::uint64_t wire_draws() const { return codec_ ? codec_->draws() : 0; }
  void set_wire_draws(std::uint64_t draws) {
    if (codec_) codec_->set_draws(draws);
  }

  /// Messages ignored by this algorithm, by reason (stale round, unexpected segment, ...).
  const std::map<std::string, std::uint64_t>& drops() const { return drops_; }

 private:
  struct Segment {
    std::size_t begin;  // element offset into data
    std::size_t count;
  };

  std::size_t chunk_begin(std::size_t chunk) const;
  int chunk_at(int step) const;
  void send_segment(int step, const Segment& s, std::uint64_t round, const Message& received, std::uint32_t crc);
  void wait_for_sends(Transport::Clock::time_point deadline);
  protocols::ByteSpan round_to_wire(int step, const Segment& s);
  Message receive_segment(int step, const Segment& s, std::uint64_t round, Transport::Clock::time_point deadline,
                          std::uint32_t& crc);
  bool matches(const Message& m, int step, const Segment& s, std::uint64_t round);
  protocols::Error absorb(int step, const Segment& s, const Message& m, std::uint32_t& crc);
  std::uint32_t reduce_fp32(float* dst, const unsigned char* src, std::size_t count, bool owner) const;

  Transport& transport_;
  std::vector<PeerId> ring_;
  protocols::Span<float> data_;
  AllreduceOptions options_;
  int size_ = 1;
  int rank_ = 0;
  PeerId left_ = 0;
  PeerId right_ = 0;
  std::vector<std::vector<Segment>> segments_;  // per chunk
  std::uint64_t round_ = 0;
  std::deque<Message> early_;  // messages of a later round that arrived during this one
  std::unique_ptr<protocols::Codec> codec_;  // the narrow wire format; null for fp32
  protocols::Span<float> residual_;          // of the current run(); may be empty
  std::vector<float> rounding_;              // one segment's rounding error
  std::vector<std::uint8_t> encoded_;        // one segment's narrow payload
  std::map<std::string, std::uint64_t> drops_;
  SendFence fence_;  // fp32 segments lent to ZeroMQ straight from data_
};

}  // namespace starling::gossip
