// Synchronous gossip averaging round (gossip/algorithms/gossip_average.h).
#include "gossip/algorithms/gossip_average.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "gossip/algorithms/float_segments.h"
#include "gossip/transport/error.h"

namespace starling::gossip {
namespace {

std::vector<int> in_ranks(const MixingPlan& plan) {
  std::vector<int> ranks;
  for (const auto& from : plan.receive_from) ranks.push_back(from.first);
  return ranks;
}

}  // namespace

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
  collect(in_ranks(plan), x.size(), deadline);
  // 3. x ← W_ii x + Σ_j W_ij x_j, then forget this round.
  mix(plan, x);
  end_round();
}

void GossipAverage::end_round() {
  inflows_.erase(inflows_.begin(), inflows_.upper_bound(round_));
  ++round_;
}

std::map<int, std::vector<float>> GossipAverage::receive_from(const std::vector<int>& ranks, std::size_t length) {
  collect(ranks, length, Transport::Clock::now() + options_.timeout);
  std::map<int, std::vector<float>> out;
  for (int r : ranks) out[r] = assembled(r, length);
  return out;
}

void GossipAverage::send_to(int rank, protocols::Span<const float> x) {
  if (rank < 0 || rank >= static_cast<int>(peers_.size()) || !transport_.reachable(peers_[rank]))
    STARLING_GOSSIP_THROW(InvalidArgument, "round " + std::to_string(round_) + ": no route to rank " + std::to_string(rank));
  send_segments(rank, x);
}

// The vector of one in-neighbour of this round, its segments put together.
std::vector<float> GossipAverage::assembled(int rank, std::size_t length) const {
  std::vector<float> v(length);
  for (const Message& seg : inflows_.at(round_).at(peers_[rank]).segments)
    std::memcpy(v.data() + seg.header.tensor_offset, seg.payload.data(), seg.header.tensor_length * sizeof(float));
  return v;
}

void GossipAverage::send_vector(const MixingPlan& plan, protocols::Span<const float> x) {
  for (int r : plan.send_to) send_segments(r, x);
}

void GossipAverage::send_segments(int r, protocols::Span<const float> x) {
  const std::size_t n = segment_count(x.size(), per_segment_);
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

void GossipAverage::collect(const std::vector<int>& ranks, std::size_t length, Transport::Clock::time_point deadline) {
  while (!complete(ranks, round_)) {
    std::optional<Message> m = transport_.try_receive(deadline);
    if (!m) STARLING_GOSSIP_THROW(TimeoutError, waiting_for(ranks));
    file(std::move(*m), length);
  }
}

// What a timed-out round still lacked, and what was dropped on the way, for the error.
std::string GossipAverage::waiting_for(const std::vector<int>& ranks) const {
  std::string what = "round " + std::to_string(round_) + " on rank " + std::to_string(rank_) + ": no vector from rank";
  const auto inflows = inflows_.find(round_);
  for (int rank : ranks) {
    const bool have = inflows != inflows_.end() && inflows->second.count(peers_[rank]) &&
                      inflows->second.at(peers_[rank]).received == inflows->second.at(peers_[rank]).segments.size();
    if (!have) what += " " + std::to_string(rank);
  }
  auto list = [&](const std::map<std::string, std::uint64_t>& drops) {
    if (drops.empty()) what += " nothing";
    for (const auto& [reason, count] : drops) what += " " + reason + " " + std::to_string(count);
  };
  what += " before the deadline; the rounds dropped:";
  list(drops_);
  what += "; the transport dropped:";
  list(transport_.stats().drops);
  return what;
}

bool GossipAverage::complete(const std::vector<int>& ranks, std::uint64_t round) const {
  const auto inflows = inflows_.find(round);
  for (int rank : ranks) {
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
  const bool stochastic = std::abs(weights - 1.0) < 1e-9;
  if (stochastic && options_.aggregator.kind != Aggregator::mean && !plan.receive_from.empty()) mix_robust(plan, x);
  else if (stochastic) mix_differences(plan, x);
  else mix_weighted(plan, x);
}

// Robust aggregation needs whole vectors (a norm, or every coordinate's values at once).
void GossipAverage::mix_robust(const MixingPlan& plan, protocols::Span<float> x) {
  std::vector<std::vector<float>> vectors;
  std::vector<NeighbourVector> neighbours;
  for (const auto& [rank, weight] : plan.receive_from) vectors.push_back(assembled(rank, x.size()));
  for (std::size_t k = 0; k < vectors.size(); ++k) neighbours.push_back({vectors[k].data(), plan.receive_from[k].second});
  const std::vector<NeighbourSample> samples = robust_mix(round_aggregator(plan, x), x, neighbours);
  for (std::size_t k = 0; k < samples.size(); ++k) neighbour_stats_[peers_[plan.receive_from[k].first]].add(samples[k]);
  if (options_.aggregator.clip_relative > 0.0) after_last_mix_.assign(x.begin(), x.end());
}

// The relative radius: the neighbours together may move x at most κ times as far as this
// peer's own training moved it since the last round, ‖x − x after the last round‖; each of
// them, of weight W_ij, by τ·W_ij, so τ = κ·‖moved‖ / Σ_j W_ij. Before any round there is no
// such distance, and the neighbours move it not at all: every peer starts from one model.
AggregatorSpec GossipAverage::round_aggregator(const MixingPlan& plan, protocols::Span<const float> x) const {
  AggregatorSpec spec = options_.aggregator;
  if (spec.kind != Aggregator::clipped || spec.clip_relative <= 0.0) return spec;
  const double moved = after_last_mix_.size() == x.size() ? distance(x, after_last_mix_.data()) : 0.0;
  const double neighbours = std::max(1.0 - plan.self_weight, 1e-12);
  spec.clip_radius = std::max(spec.clip_relative * moved / neighbours, std::numeric_limits<double>::min());
  return spec;
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
