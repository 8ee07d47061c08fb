// Synchronous gossip averaging round (gossip/algorithms/gossip_average.h).
#include "gossip/algorithms/gossip_average.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gossip/algorithms/float_segments.h"
#include "gossip/transport/error.h"

namespace starling::gossip {

GossipAverage::GossipAverage(Transport& transport, std::vector<PeerId> peers, MixingSchedule schedule,
                             GossipOptions options)
    : transport_(transport),
      peers_(std::move(peers)),
      schedule_(std::move(schedule)),
      options_(options),
      per_segment_(std::max<std::size_t>(1, options.segment_bytes / sizeof(float))),
      round_(options.first_round) {
  const auto self = std::find(peers_.begin(), peers_.end(), transport_.self());
  if (self == peers_.end()) STARLING_GOSSIP_THROW(InvalidArgument, "own peer id is not among the peers");
  rank_ = static_cast<int>(self - peers_.begin());
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) rank_of_[peers_[r]] = r;
  if (!schedule_) STARLING_GOSSIP_THROW(InvalidArgument, "empty mixing schedule");
}

void GossipAverage::run(protocols::Span<float> x) {
  const MixingPlan plan = schedule_(round_);
  for (int r : plan.send_to)
    if (r < 0 || r >= static_cast<int>(peers_.size()) || !transport_.reachable(peers_[r]))
      STARLING_GOSSIP_THROW(InvalidArgument, "round " + std::to_string(round_) + ": no route to rank " + std::to_string(r));
  const auto deadline = Transport::Clock::now() + options_.timeout;
  // 1. Push the own vector, as it is before mixing, to this round's out-neighbours.
  send_vector(plan, x);
  // 2. Wait for every in-neighbour's vector of this round; later rounds are kept for later.
  collect(round_, x.size(), deadline);
  // 3. x ← W_ii x + Σ_j W_ij x_j, then forget this round.
  mix(plan, x);
  inflows_.erase(inflows_.begin(), inflows_.upper_bound(round_));
  ++round_;
}

void GossipAverage::send_vector(const MixingPlan& plan, protocols::Span<const float> x) {
  const std::size_t n = segment_count(x.size(), per_segment_);
  for (int r : plan.send_to)
    for (std::size_t s = 0; s < n; ++s) {
      const std::size_t begin = s * per_segment_;
      const std::size_t count = std::min(per_segment_, x.size() - std::min(begin, x.size()));
      protocols::FrameHeader h;
      h.type = protocols::MessageType::gossip_push;
      h.flags = s + 1 == n ? protocols::kFlagLastChunk : 0;
      h.round = round_;
      h.tensor_offset = begin;
      h.tensor_length = count;
      const protocols::ByteSpan bytes(reinterpret_cast<const std::uint8_t*>(x.data() + begin), count * sizeof(float));
      transport_.send(peers_[r], h, bytes);
    }
}

void GossipAverage::collect(std::uint64_t round, std::size_t length, Transport::Clock::time_point deadline) {
  const MixingPlan plan = schedule_(round);
  while (!complete(plan, round)) file(transport_.receive(deadline), length);
}

bool GossipAverage::complete(const MixingPlan& plan, std::uint64_t round) const {
  const auto inflows = inflows_.find(round);
  for (const auto& [rank, weight] : plan.receive_from) {
    if (inflows == inflows_.end()) return false;
    const auto it = inflows->second.find(peers_[rank]);
    if (it == inflows->second.end() || it->second.received != it->second.segments.size()) return false;
  }
  return true;
}

// Why a message cannot belong to a round at all; nullptr when it may be filed.
const char* GossipAverage::reject_reason(const Message& m, std::size_t length) const {
  const protocols::FrameHeader& h = m.header;
  if (h.type != protocols::MessageType::gossip_push) return "unexpected_type";
  if (h.round < round_) return "stale_round";
  if (h.round > round_ + options_.max_rounds_ahead) return "too_far_ahead";
  const auto sender = rank_of_.find(m.from);
  if (sender == rank_of_.end()) return "unknown_sender";
  const MixingPlan plan = schedule_(h.round);
  const bool expected = std::any_of(plan.receive_from.begin(), plan.receive_from.end(),
                                    [&](const auto& in) { return in.first == sender->second; });
  if (!expected) return "not_an_in_neighbour";
  const std::size_t begin = (h.tensor_offset / per_segment_) * per_segment_;
  const std::size_t count = std::min(per_segment_, length - std::min(begin, length));
  if (h.tensor_offset != begin || h.tensor_offset >= std::max<std::size_t>(length, 1) || h.tensor_length != count ||
      m.payload.size() != count * sizeof(float))
    return "segment_out_of_range";
  if (!all_finite(m)) return "non_finite";
  return nullptr;
}

void GossipAverage::file(Message m, std::size_t length) {
  if (const char* reason = reject_reason(m, length)) {
    ++drops_[reason];
    return;
  }
  Inflow& in = inflows_[m.header.round][m.from];
  if (in.segments.empty()) in.segments.resize(segment_count(length, per_segment_));
  Message& slot = in.segments[m.header.tensor_offset / per_segment_];
  if (slot.header.type == protocols::MessageType::gossip_push) {  // a filled slot
    ++drops_["duplicate_segment"];
    return;
  }
  slot = std::move(m);
  ++in.received;
}

void GossipAverage::mix(const MixingPlan& plan, protocols::Span<float> x) {
  double weights = plan.self_weight;
  for (const auto& from : plan.receive_from) weights += from.second;
  if (std::abs(weights - 1.0) < 1e-9) mix_differences(plan, x);
  else mix_weighted(plan, x);
}

// x_i ← x_i + Σ_j W_ij (x_j − x_i): with W symmetric, what i gains from j is bit for bit
// what j loses to i, so the mean is kept up to unbiased rounding. The weighted sum would
// scale it every round by Σ_j float(W_ij) ≠ 1, a drift that the exact algorithms
// (gradient tracking, exact diffusion) carry as bias.
void GossipAverage::mix_differences(const MixingPlan& plan, protocols::Span<float> x) {
  own_.assign(x.begin(), x.end());
  const RoundInflows& inflows = inflows_[round_];
  for (const auto& [rank, weight] : plan.receive_from) {
    const float w = static_cast<float>(weight);
    for (const Message& seg : inflows.at(peers_[rank]).segments) {
      const auto* src = static_cast<const unsigned char*>(seg.payload.data());
      const std::size_t at = seg.header.tensor_offset;
      float* dst = x.data() + at;
      const float* own = own_.data() + at;
      for (std::size_t i = 0; i < seg.header.tensor_length; ++i) dst[i] += w * (load_float(src, i) - own[i]);
    }
  }
}

// x_i ← W_ii x_i + Σ_j W_ij x_j, for plans that are not row-stochastic (push-sum's).
void GossipAverage::mix_weighted(const MixingPlan& plan, protocols::Span<float> x) {
  const float self = static_cast<float>(plan.self_weight);
  for (float& v : x) v *= self;
  const RoundInflows& inflows = inflows_[round_];
  for (const auto& [rank, weight] : plan.receive_from) {
    const float w = static_cast<float>(weight);
    for (const Message& seg : inflows.at(peers_[rank]).segments) {
      const auto* src = static_cast<const unsigned char*>(seg.payload.data());
      float* dst = x.data() + seg.header.tensor_offset;
      for (std::size_t i = 0; i < seg.header.tensor_length; ++i) dst[i] += w * load_float(src, i);
    }
  }
}

}  // namespace starling::gossip
