// The checks of every received frame (gossip/transport/admission.h).
#include "gossip/transport/admission.h"

#include <algorithm>
#include <string>

#include "protocols/crc32c.h"
#include "protocols/membership_messages.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::gossip {
namespace {

// Strangers share one rate bucket under an id no peer can have (ids are below 2^31).
constexpr PeerId kStrangers = 0xFFFFFFFFu;

// Frames whose codec-none payload is the raw fp32 values themselves (tensor_length floats,
// the plain algorithms' convention; CHOCO's codec-none payloads carry a codec header and are
// longer, and its codec checks them): every value must be finite.
bool raw_floats(const protocols::FrameHeader& h, protocols::ByteSpan payload) {
  using protocols::MessageType;
  if (h.codec != protocols::CodecId::none) return false;
  if (h.type != MessageType::gossip_push && h.type != MessageType::gossip_pull_reply &&
      h.type != MessageType::allreduce_segment)
    return false;
  return payload.size() % sizeof(float) == 0 && payload.size() / sizeof(float) == h.tensor_length;
}

// protocols::verify_payload's checks (length, then CRC-32C), and for raw floats whether they
// are all finite, in one pass over memory: block by block, the (vectorized) finite check reads
// what the CRC has just brought into L1. Apart, the two cold reads of a segment cost the
// receiving thread twice the memory traffic.
protocols::Error check_payload(const protocols::FrameHeader& h, protocols::ByteSpan payload, bool& finite) {
  finite = true;
  if (!raw_floats(h, payload) || payload.size() != h.payload_length) return protocols::verify_payload(h, payload);
  constexpr std::size_t kBlock = 16 << 10;  // bytes, a multiple of sizeof(float): half of L1
  const auto f32_finite = protocols::simd::codec_kernels().f32_finite;
  std::uint32_t crc = 0;
  for (std::size_t b = 0; b < payload.size(); b += kBlock) {
    const std::size_t n = std::min(kBlock, payload.size() - b);
    crc = protocols::crc32c(payload.data() + b, n, crc);
    finite = finite && f32_finite(payload.data() + b, n / sizeof(float));
  }
  return crc == h.payload_crc ? protocols::Error::ok : protocols::Error::crc_mismatch;
}

}  // namespace

Admission::Admission(const std::vector<PeerId>& accept, protocols::FrameLimits limits, bool accept_unknown_hello,
                     std::uint32_t max_messages_per_second, StatsRecorder& stats)
    : known_(accept.begin(), accept.end()),
      limits_(limits),
      accept_unknown_hello_(accept_unknown_hello),
      max_messages_per_second_(max_messages_per_second),
      stats_(stats) {}

bool Admission::relay_within_rate(PeerId via, Clock::time_point now) {
  if (within_rate(via, knows(via), now)) return true;
  stats_.dropped("rate_limited");
  return false;
}

bool Admission::within_rate(PeerId peer, bool known, Clock::time_point now) {
  if (max_messages_per_second_ == 0) return true;
  const double rate = max_messages_per_second_;
  Bucket& b = buckets_[known ? peer : kStrangers];
  if (b.last == Clock::time_point{}) b.tokens = rate;  // a full second's burst to start with
  else b.tokens = std::min(rate, b.tokens + rate * std::chrono::duration<double>(now - b.last).count());
  b.last = now;
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

std::optional<Admission::Screened> Admission::screen(PeerId peer, protocols::ByteSpan head,
                                                    protocols::ByteSpan payload, Clock::time_point now) {
  const bool known = known_.count(peer) != 0;
  if (!known && !accept_unknown_hello_) return stats_.dropped("unknown_sender"), std::nullopt;
  if (!within_rate(peer, known, now)) return stats_.dropped("rate_limited"), std::nullopt;
  Screened s;
  protocols::Result<protocols::FrameHeader> header = protocols::decode_header(head, limits_);
  if (!header) return stats_.dropped(std::string(protocols::to_string(header.error()))), std::nullopt;
  if (const protocols::Error e = check_payload(*header, payload, s.finite); e != protocols::Error::ok)
    return stats_.dropped(std::string(protocols::to_string(e))), std::nullopt;
  if (!known && header->type != protocols::MessageType::hello) return stats_.dropped("unknown_sender"), std::nullopt;
  if (header->sender != peer) return stats_.dropped("sender_mismatch"), std::nullopt;
  s.header = *header;
  return s;
}

void Admission::pass(PeerId peer, const Screened& screened, Payload payload, std::uint64_t bytes,
                     Clock::time_point now, Inbox& inbox) {
  if (!screened.finite) return stats_.dropped("non_finite");
  const protocols::FrameHeader& header = screened.header;
  if (header.type == protocols::MessageType::heartbeat) {
    // Periodic heartbeats end here, with the view and round they announce. Those that carry
    // notices come from the sender's owner thread, whose header names no view: the owner
    // gets them (and malformed ones, to count them) as any other message.
    const auto beat = protocols::decode_heartbeat(payload.bytes());
    if (beat && beat->notices.empty()) return stats_.heartbeat(peer, bytes, now, header.round, beat->last_round);
  }
  stats_.received(peer, bytes, now, protocols::is_control_message(header.type));
  inbox.push(Message{peer, header, std::move(payload)});
}

}  // namespace starling::gossip
