// The checks of every received frame (gossip/transport/admission.h).
#include "gossip/transport/admission.h"

#include <algorithm>
#include <string>

#include "protocols/membership_messages.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::gossip {
namespace {

// Strangers share one rate bucket under an id no peer can have (ids are below 2^31).
constexpr PeerId kStrangers = 0xFFFFFFFFu;

// Frames whose codec-none payload is the raw fp32 values themselves (tensor_length floats,
// the plain algorithms' convention; CHOCO's codec-none payloads carry a codec header and are
// longer, and its codec checks them): every value must be finite.
const char* raw_float_problem(const protocols::FrameHeader& h, protocols::ByteSpan payload) {
  using protocols::MessageType;
  if (h.codec != protocols::CodecId::none) return nullptr;
  if (h.type != MessageType::gossip_push && h.type != MessageType::gossip_pull_reply &&
      h.type != MessageType::allreduce_segment)
    return nullptr;
  if (payload.size() % sizeof(float) != 0 || payload.size() / sizeof(float) != h.tensor_length) return nullptr;
  // The codecs' vectorized check: a scalar pass here cost twice the CRC of the same bytes.
  return protocols::simd::codec_kernels().f32_finite(payload.data(), h.tensor_length) ? nullptr : "non_finite";
}

}  // namespace

Admission::Admission(const std::vector<PeerId>& accept, protocols::FrameLimits limits, bool accept_unknown_hello,
                     std::uint32_t max_messages_per_second, StatsRecorder& stats)
    : known_(accept.begin(), accept.end()),
      limits_(limits),
      accept_unknown_hello_(accept_unknown_hello),
      max_messages_per_second_(max_messages_per_second),
      stats_(stats) {}

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

std::optional<protocols::FrameHeader> Admission::screen(PeerId peer, protocols::ByteSpan head,
                                                        protocols::ByteSpan payload, Clock::time_point now) {
  const bool known = known_.count(peer) != 0;
  if (!known && !accept_unknown_hello_) return stats_.dropped("unknown_sender"), std::nullopt;
  if (!within_rate(peer, known, now)) return stats_.dropped("rate_limited"), std::nullopt;
  protocols::Result<protocols::FrameHeader> header = protocols::parse_frame(head, payload, limits_);
  if (!header) return stats_.dropped(std::string(protocols::to_string(header.error()))), std::nullopt;
  if (!known && header->type != protocols::MessageType::hello) return stats_.dropped("unknown_sender"), std::nullopt;
  if (header->sender != peer) return stats_.dropped("sender_mismatch"), std::nullopt;
  return *header;
}

void Admission::pass(PeerId peer, const protocols::FrameHeader& header, Payload payload, std::uint64_t bytes,
                     Clock::time_point now, Inbox& inbox) {
  if (const char* problem = raw_float_problem(header, payload.bytes())) return stats_.dropped(problem);
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
