// CHOCO-Gossip compressed averaging round (gossip/algorithms/choco_gossip.h).
#include "gossip/algorithms/choco_gossip.h"

#include <algorithm>
#include <utility>

#include "gossip/algorithms/codec_streams.h"
#include "gossip/algorithms/float_segments.h"
#include "gossip/algorithms/state_counts.h"
#include "gossip/transport/error.h"

namespace starling::gossip {

ChocoGossip::ChocoGossip(Transport& transport, std::vector<PeerId> peers, MixingSchedule schedule,
                         const std::string& codec, const protocols::CodecOptions& codec_options,
                         ChocoOptions options)
    : transport_(transport),
      peers_(std::move(peers)),
      schedule_(std::move(schedule)),
      codec_name_(codec),
      codec_options_(codec_options),
      options_(options),
      per_segment_(std::max<std::size_t>(1, options.segment_bytes / sizeof(float))),
      round_(options.first_round) {
  const auto self = std::find(peers_.begin(), peers_.end(), transport_.self());
  if (self == peers_.end()) STARLING_GOSSIP_THROW(InvalidArgument, "own peer id is not among the peers");
  rank_ = static_cast<int>(self - peers_.begin());
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) rank_of_[peers_[r]] = r;
  if (!schedule_) STARLING_GOSSIP_THROW(InvalidArgument, "empty mixing schedule");
  if (!(options_.gamma > 0.0 && options_.gamma <= 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "gamma must lie in (0, 1]");
  // Probe the codec once so that a bad name or option fails here, not in the first round.
  codec_id_ = checked_codec_id(codec_name_, codec_options_);
}

std::size_t ChocoGossip::segment_size(std::size_t s) const {
  const std::size_t begin = segment_begin(s);
  return std::min(per_segment_, length_ - std::min(begin, length_));
}

void ChocoGossip::run(protocols::Span<float> x) {
  const MixingPlan plan = schedule_(round_);
  prepare(plan, x.size());
  check_plan(plan);
  const auto deadline = Transport::Clock::now() + options_.timeout;
  // 1–2. Compress x_i − x̂_i, apply it to the own public copy, push it to the neighbours.
  encode_and_send(plan, x);
  // 3. Apply this round's q_j already buffered, then wait for the rest of them.
  const auto early = pending_.find(round_);
  if (early != pending_.end()) {
    std::vector<Message> buffered = std::move(early->second);
    pending_.erase(early);
    for (Message& m : buffered) file(std::move(m));
  }
  collect(deadline);
  // 4. x_i ← x_i + γ Σ_j W_ij (x̂_j − x̂_i), then open the next round.
  mix(plan, x);
  for (auto& [rank, in] : arrivals_) {
    std::fill(in.applied.begin(), in.applied.end(), false);
    in.count = 0;
  }
  ++round_;
}

// First call: fixes length, neighbours and one codec stream per segment; later calls
// only check that the length has not changed.
void ChocoGossip::make_codecs() {
  codecs_ = make_codec_streams(codec_name_, codec_options_, transport_.self(), segments_);
}

void ChocoGossip::set_density(double density) {
  if (!(density > 0.0 && density <= 1.0)) STARLING_GOSSIP_THROW(InvalidArgument, "density must lie in (0, 1]");
  codec_options_.set("density", density);
  if (prepared_) make_codecs();
}

void ChocoGossip::prepare(const MixingPlan& plan, std::size_t length) {
  if (prepared_) {
    if (length != length_)
      STARLING_GOSSIP_THROW(InvalidArgument, "vector length changed from " + std::to_string(length_) + " to " +
                                                 std::to_string(length));
    return;
  }
  length_ = length;
  segments_ = segment_count(length_, per_segment_);
  make_codecs();
  for (const auto& [rank, weight] : plan.receive_from) neighbours_.push_back(rank);
  std::sort(neighbours_.begin(), neighbours_.end());
  copies_[rank_].assign(length_, 0.0f);
  for (int r : neighbours_) {
    copies_[r].assign(length_, 0.0f);
    arrivals_[r].applied.assign(segments_, false);
  }
  diff_.resize(std::min(per_segment_, std::max<std::size_t>(length_, 1)));
  residual_.resize(diff_.size());
  prepared_ = true;
}

std::vector<float> ChocoGossip::state() const {
  if (!prepared_) return {};
  std::vector<float> values;
  values.reserve(copies_.size() * length_ + kFloatsPerCount * codecs_.size());
  for (const auto& [rank, copy] : copies_) values.insert(values.end(), copy.begin(), copy.end());
  for (const auto& codec : codecs_) append_count(values, codec->draws());
  return values;
}

bool ChocoGossip::resume(const std::vector<float>& state, std::size_t length) {
  if (prepared_) return false;
  prepare(schedule_(round_), length);
  if (state.size() != copies_.size() * length_ + kFloatsPerCount * codecs_.size()) return false;
  std::vector<std::uint64_t> draws(codecs_.size());
  const float* counts = state.data() + copies_.size() * length_;
  for (std::size_t s = 0; s < draws.size(); ++s)
    if (!read_count(counts + kFloatsPerCount * s, draws[s])) return false;
  const float* next = state.data();
  for (auto& [rank, copy] : copies_) {
    std::copy(next, next + length_, copy.begin());
    next += length_;
  }
  for (std::size_t s = 0; s < draws.size(); ++s) codecs_[s]->set_draws(draws[s]);
  return true;
}

// The copies x̂_j stay identical only if every holder of x̂_j sees every q_j: the plan must
// send to exactly the ranks it receives from, and be the same every round.
void ChocoGossip::check_plan(const MixingPlan& plan) const {
  std::vector<int> in;
  for (const auto& [rank, weight] : plan.receive_from) in.push_back(rank);
  std::sort(in.begin(), in.end());
  std::vector<int> out = plan.send_to;
  std::sort(out.begin(), out.end());
  const std::string where = "round " + std::to_string(round_) + ": ";
  if (in != out) STARLING_GOSSIP_THROW(InvalidArgument, where + "CHOCO needs a symmetric plan");
  if (in != neighbours_) STARLING_GOSSIP_THROW(InvalidArgument, where + "CHOCO needs the same plan every round");
  for (int r : out)
    if (r < 0 || r >= static_cast<int>(peers_.size()) || r == rank_ || !transport_.reachable(peers_[r]))
      STARLING_GOSSIP_THROW(InvalidArgument, where + "no route to rank " + std::to_string(r));
}

void ChocoGossip::encode_and_send(const MixingPlan& plan, protocols::Span<const float> x) {
  std::vector<float>& own = copies_[rank_];
  last_sent_ = 0;
  for (std::size_t s = 0; s < segments_; ++s) {
    const std::size_t begin = segment_begin(s), count = segment_size(s);
    for (std::size_t i = 0; i < count; ++i) diff_[i] = x[begin + i] - own[begin + i];
    std::fill(residual_.begin(), residual_.begin() + count, 0.0f);
    protocols::Codec& codec = *codecs_[s];
    const protocols::Error encoded = codec.encode({diff_.data(), count}, {residual_.data(), count}, payload_);
    if (encoded != protocols::Error::ok)
      STARLING_GOSSIP_THROW(InvalidArgument, "encode: " + std::string(protocols::to_string(encoded)));
    // The own copy takes the decoded q_i, bit for bit what the neighbours will add.
    const protocols::Error decoded =
        codec.decode({payload_.data(), payload_.size()}, {own.data() + begin, count}, protocols::Apply::add);
    if (decoded != protocols::Error::ok)
      STARLING_GOSSIP_THROW(InvalidArgument, "codec cannot decode its own payload: " +
                                                 std::string(protocols::to_string(decoded)));
    last_sent_ += codec.last_sent();
    protocols::FrameHeader h;
    h.type = protocols::MessageType::gossip_push;
    h.codec = codec_id_;
    h.flags = s + 1 == segments_ ? protocols::kFlagLastChunk : 0;
    h.round = round_;
    h.tensor_offset = begin;
    h.tensor_length = count;
    for (int r : plan.send_to) transport_.send(peers_[r], h, protocols::ByteSpan(payload_.data(), payload_.size()));
  }
}

void ChocoGossip::collect(Transport::Clock::time_point deadline) {
  while (!complete()) file(transport_.receive(deadline));
}

bool ChocoGossip::complete() const {
  for (const auto& [rank, in] : arrivals_)
    if (in.count != segments_) return false;
  return true;
}

// Why a message cannot be a segment of this or a buffered later round; nullptr if it can.
const char* ChocoGossip::reject_reason(const Message& m) const {
  const protocols::FrameHeader& h = m.header;
  if (h.type != protocols::MessageType::gossip_push) return "unexpected_type";
  if (h.round < round_) return "stale_round";
  if (h.round > round_ + options_.max_rounds_ahead) return "too_far_ahead";
  const auto sender = rank_of_.find(m.from);
  if (sender == rank_of_.end()) return "unknown_sender";
  if (!arrivals_.count(sender->second)) return "not_an_in_neighbour";
  if (h.codec != codec_id_) return "codec_mismatch";
  const std::size_t s = h.tensor_offset / per_segment_;
  if (s >= segments_ || h.tensor_offset != segment_begin(s) || h.tensor_length != segment_size(s))
    return "segment_out_of_range";
  const bool last = (h.flags & protocols::kFlagLastChunk) != 0;
  if (last != (s + 1 == segments_)) return "segment_out_of_range";
  return nullptr;
}

void ChocoGossip::file(Message m) {
  if (const char* reason = reject_reason(m)) {
    ++drops_[reason];
    return;
  }
  if (m.header.round == round_) return apply(m);
  std::vector<Message>& later = pending_[m.header.round];
  // Bounds what a misbehaving neighbour can make this peer hold for later rounds.
  if (later.size() >= arrivals_.size() * segments_) {
    ++drops_["buffer_full"];
    return;
  }
  later.push_back(std::move(m));
}

// Adds one neighbour's q_j segment to x̂_j; the codec validates it before touching x̂_j.
void ChocoGossip::apply(const Message& m) {
  Arrivals& in = arrivals_[rank_of_.at(m.from)];
  const std::size_t s = m.header.tensor_offset / per_segment_;
  if (in.applied[s]) {
    ++drops_["duplicate_segment"];
    return;
  }
  std::vector<float>& copy = copies_[rank_of_.at(m.from)];
  const protocols::Error e =
      codecs_[s]->decode(m.bytes(), {copy.data() + segment_begin(s), segment_size(s)}, protocols::Apply::add);
  if (e != protocols::Error::ok) {
    ++drops_[std::string(protocols::to_string(e))];
    return;
  }
  in.applied[s] = true;
  ++in.count;
}

void ChocoGossip::mix(const MixingPlan& plan, protocols::Span<float> x) {
  const std::vector<float>& own = copies_[rank_];
  for (const auto& [rank, weight] : plan.receive_from) {
    const float w = static_cast<float>(options_.gamma * weight);
    const std::vector<float>& other = copies_[rank];
    for (std::size_t i = 0; i < length_; ++i) x[i] += w * (other[i] - own[i]);
  }
}

}  // namespace starling::gossip
