// The outer step that goes on without slow peers (gossip/algorithms/deferred_outer_sync.h).
#include "gossip/algorithms/deferred_outer_sync.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gossip/algorithms/codec_streams.h"
#include "gossip/algorithms/outer_optimizer_sync.h"
#include "gossip/algorithms/float_segments.h"
#include "gossip/transport/error.h"
#include "protocols/codec_row.h"

namespace starling::gossip {

namespace {

// A member up to this much slower than the fastest stays in step (d = 1): differences of
// speed that a shared CPU's noise makes cost less waiting than a pseudo-gradient made stale.
constexpr double kInStep = 2.0;
// Deferring more than the ratio says leaves the slow member's pseudo-gradient time to arrive
// before the others reach its round, when they speed up meanwhile (a slow member that sleeps
// leaves them its share of a shared CPU).
constexpr double kMargin = 1.25;

}  // namespace

bool DeferredOuterSync::Contribution::complete(std::size_t segments_needed) const {
  if (!plan) return false;
  return plan->next == protocols::kNoMoreRounds || received == segments_needed;
}

DeferredOuterSync::DeferredOuterSync(const SyncSetup& s)
    : transport_(s.transport),
      spec_(s.spec),
      members_(s.members),
      model_(s.model),
      per_segment_(std::max<std::size_t>(1, (std::size_t{1} << 20) / sizeof(float))),
      segment_count_(segment_count(s.model.size(), per_segment_)),
      codec_id_(checked_codec_id(s.spec.codec, s.codec_options)),
      first_round_(s.first_round),
      next_round_(s.first_round),
      kept_(s.model.size()),
      residual_(s.model.size(), 0.0f),
      change_(s.model.size()),
      mean_(s.model.size()),
      unused_(s.model.size()),
      payloads_(segment_count_) {
  if (!(s.spec.outer_lr > 0.0)) STARLING_GOSSIP_THROW(InvalidArgument, "the outer learning rate must be positive");
  if (!(s.spec.outer_momentum >= 0.0 && s.spec.outer_momentum < 1.0))
    STARLING_GOSSIP_THROW(InvalidArgument, "the outer momentum must lie in [0, 1)");
  const protocols::CodecRow* row = protocols::codec_row(s.spec.codec);
  if (row && row->route == protocols::AllreduceRoute::low_rank)
    STARLING_GOSSIP_THROW(InvalidArgument, "deferred outer steps cannot run codec " + s.spec.codec +
                                               ": its low-rank reduce needs every member in every round");
  codecs_ = make_codec_streams(s.spec.codec, s.codec_options, transport_.self(), segment_count_);
  exact_ = make_codec_streams("none", {}, transport_.self(), segment_count_);
  auto checker = protocols::make_codec(codec_id_);
  if (!checker) STARLING_GOSSIP_THROW(InvalidArgument, "deferred outer steps: unknown codec " + s.spec.codec);
  checker_ = std::move(checker.value());
  own_ = Member{first_round_, first_round_, false};
  for (PeerId p : members_)
    if (p != transport_.self()) others_[p] = own_;
}

void DeferredOuterSync::round(double compute_seconds) {
  span_ = RoundSpan{};
  if (!kept_.started) return start_together();
  const std::uint64_t first = next_round_, own = own_.next;
  while (std::optional<Message> m = transport_.try_receive()) take(std::move(*m));  // the others' latest plans
  const std::uint64_t next = own + rounds_to_defer(period_compute(compute_seconds));
  for (std::size_t i = 0; i < change_.size(); ++i) change_[i] = start_[i] - model_[i];
  encode(change_, codecs_, residual_);
  send(own, {own_.base, next, iteration(), compute_seconds});
  const std::uint64_t job_iteration = step_through(first, own);
  own_ = Member{own + 1, next, false};
  std::copy(start_.begin(), start_.end(), model_.begin());
  span_.rounds = own + 1 - first;
  if (job_iteration > iteration()) span_.iteration = job_iteration;
}

// Hysteresis over its last two periods' compute: a member in step defers only when both
// were slow, and one deferring goes back in step only when both were fast, so that one
// period's noise on a busy CPU does not flip it.
double DeferredOuterSync::period_compute(double compute_seconds) {
  const bool deferring = own_.next > own_.base;
  const double compute = last_compute_ <= 0.0 ? compute_seconds
                         : deferring          ? std::max(compute_seconds, last_compute_)
                                              : std::min(compute_seconds, last_compute_);
  last_compute_ = compute_seconds;
  return compute;
}

// Steps rounds first..own as their pseudo-gradients arrive (this member's own is for the
// last), none from the job's end on; returns the job's iteration as the others' plans give it.
std::uint64_t DeferredOuterSync::step_through(std::uint64_t first, std::uint64_t own) {
  std::uint64_t job_iteration = iteration();
  for (std::uint64_t r = first; r <= own; ++r) {
    if (ended_ && r > *ended_) break;
    await(r);
    for (const auto& [peer, member] : others_)  // contributors and those that said they finished
      if (member.next == r && arrived_[r][peer].plan) job_iteration = std::max(job_iteration, arrived_[r][peer].plan->iteration);
    span_.published_by = contributors(r);
    if (ended_ && r >= *ended_) {  // nobody steps it: this member's digest is the only one of it
      span_.published_by = {transport_.self()};
      break;
    }
    step(r);
  }
  arrived_.erase(arrived_.begin(), arrived_.upper_bound(own));
  next_round_ = own + 1;
  return job_iteration;
}

// Every member's model, in fp32 to every other member, averaged in ring order: x₀ for all,
// u = 0, and every member's first pseudo-gradient is for the next round.
void DeferredOuterSync::start_together() {
  std::copy(model_.begin(), model_.end(), change_.begin());
  encode(change_, exact_, unused_);
  send(first_round_, {first_round_, first_round_ + 1, iteration(), 0.0});
  await(first_round_);
  std::map<PeerId, Contribution> arrived = std::move(arrived_[first_round_]);
  arrived_.erase(first_round_);
  const float total = sum(first_round_, members_, arrived);
  for (std::size_t i = 0; i < start_.size(); ++i) start_[i] = mean_[i] / total;
  std::fill(velocity_.begin(), velocity_.end(), 0.0f);
  std::copy(start_.begin(), start_.end(), model_.begin());
  kept_.started = true;
  next_round_ = first_round_ + 1;
  own_ = Member{next_round_, next_round_, false};
  for (auto& [peer, member] : others_) member = own_;
}

// Against the median of the other members' compute: a member up to kInStep times slower
// stays in step; a slower one defers by as many rounds as the pace (the slowest member in
// step) fits into its compute.
std::uint64_t DeferredOuterSync::rounds_to_defer(double compute_seconds) const {
  std::vector<double> others;
  for (const auto& [peer, seconds] : compute_)
    if (!others_.at(peer).finished) others.push_back(seconds);
  if (others.empty()) return 1;
  std::nth_element(others.begin(), others.begin() + static_cast<long>(others.size() / 2), others.end());
  const double median = others[others.size() / 2];
  std::uint64_t rounds = 1;
  if (median > 0.0 && compute_seconds > kInStep * median) {
    double pace = median;
    for (double seconds : others)
      if (seconds <= kInStep * median) pace = std::max(pace, seconds);
    rounds = static_cast<std::uint64_t>(std::min(std::ceil(kMargin * compute_seconds / pace), static_cast<double>(kMaxDeferral)));
  }
  if (rounds != own_.next - own_.base + 1 && spec_.on_event) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "slow peers: this peer's next pseudo-gradient is for %llu round(s) on (%.2f s of compute a period)",
                  static_cast<unsigned long long>(rounds), compute_seconds);
    spec_.on_event(line);
  }
  return rounds;
}

// The values, per segment, into payloads_: with the pseudo-gradients' codec streams, which
// keep what they leave out in the residual (error feedback), or exactly.
void DeferredOuterSync::encode(const std::vector<float>& values, std::vector<std::unique_ptr<protocols::Codec>>& codecs,
                               std::vector<float>& residual) {
  for (std::size_t s = 0; s < segment_count_; ++s) {
    const std::size_t begin = s * per_segment_, count = std::min(per_segment_, values.size() - begin);
    const protocols::Error e =
        codecs[s]->encode({values.data() + begin, count}, {residual.data() + begin, count}, payloads_[s]);
    if (e != protocols::Error::ok) STARLING_GOSSIP_THROW(InvalidArgument, "encode: " + std::string(protocols::to_string(e)));
  }
}

// The plan, then payloads_ as segments, to every other member that has not finished; this
// member's own payloads are summed like theirs when the round steps.
void DeferredOuterSync::send(std::uint64_t round, const protocols::OuterPlan& plan) {
  std::vector<std::uint8_t> bytes;
  protocols::encode_outer_plan(plan, bytes);
  protocols::FrameHeader h;
  h.type = protocols::MessageType::outer_plan;
  h.round = round;
  for (const auto& [peer, member] : others_) {
    if (member.finished) continue;
    transport_.send(peer, h, protocols::ByteSpan(bytes.data(), bytes.size()));
    for (std::size_t s = 0; s < segment_count_; ++s) {
      protocols::FrameHeader d;
      d.type = protocols::MessageType::model_update;
      d.codec = round == first_round_ ? protocols::CodecId::none : codec_id_;
      d.round = round;
      d.tensor_offset = s * per_segment_;
      d.tensor_length = std::min(per_segment_, model_.size() - d.tensor_offset);
      if (s + 1 == segment_count_) d.flags = protocols::kFlagLastChunk;
      transport_.send(peer, d, protocols::ByteSpan(payloads_[s].data(), payloads_[s].size()));
    }
  }
}

// The members whose pseudo-gradients round r averages, in ring order (after await(r), which
// marks those that said they finished).
std::vector<PeerId> DeferredOuterSync::contributors(std::uint64_t r) const {
  std::vector<PeerId> out;
  for (PeerId p : members_) {
    const Member& m = p == transport_.self() ? own_ : others_.at(p);
    if (!m.finished && m.next == r) out.push_back(p);
  }
  return out;
}

// Receives until every other member that round r waits for has sent all of it, or said
// it has finished.
void DeferredOuterSync::await(std::uint64_t r) {
  for (;;) {
    bool waiting = false;
    for (auto& [peer, member] : others_) {
      if (member.finished || member.next != r) continue;
      const Contribution& c = arrived_[r][peer];
      if (!c.complete(segment_count_)) {
        waiting = true;
        continue;
      }
      if (c.plan->next != protocols::kNoMoreRounds) continue;
      member.finished = true;
      ended_ = std::min(ended_.value_or(r), r);
    }
    if (!waiting) return;
    std::optional<Message> m = transport_.try_receive(Transport::Clock::now() + std::chrono::milliseconds(50));
    if (m) take(std::move(*m));
  }
}

void DeferredOuterSync::take(Message m) {
  if (others_.count(m.from) == 0) return drop("not_a_member");
  if (m.header.round < next_round_) return drop("stale");
  if (m.header.round > next_round_ + 2 * kMaxDeferral) return drop("too_early");
  if (m.header.type == protocols::MessageType::outer_plan) return take_plan(m);
  if (m.header.type == protocols::MessageType::model_update) return take_segment(m);
  drop("unexpected");
}

void DeferredOuterSync::take_plan(Message& m) {
  const auto plan = protocols::decode_outer_plan(m.bytes());
  if (!plan) return drop("bad_plan");
  const bool withdrawal = plan->next == protocols::kNoMoreRounds;
  if (!withdrawal && (plan->next <= m.header.round || plan->next > m.header.round + kMaxDeferral ||
                      plan->base > m.header.round))
    return drop("bad_plan");
  Contribution& c = arrived_[m.header.round][m.from];
  if (c.plan) return drop("duplicate");
  c.plan = *plan;
  if (!withdrawal) compute_[m.from] = plan->compute_seconds;
}

void DeferredOuterSync::take_segment(Message& m) {
  const std::uint64_t offset = m.header.tensor_offset;
  const bool models = m.header.round == first_round_;
  const protocols::CodecId codec = models ? protocols::CodecId::none : codec_id_;
  if (m.header.codec != codec || offset % per_segment_ != 0 || offset >= model_.size() ||
      m.header.tensor_length != std::min<std::uint64_t>(per_segment_, model_.size() - offset))
    return drop("bad_segment");
  // Checked by decoding before it is kept: a bad payload never reaches a round's sum.
  const protocols::Codec& checker = models ? *exact_.front() : *checker_;
  if (checker.decode(m.bytes(), {mean_.data(), static_cast<std::size_t>(m.header.tensor_length)},
                       protocols::Apply::assign) != protocols::Error::ok)
    return drop("bad_payload");
  Contribution& c = arrived_[m.header.round][m.from];
  c.segments.resize(segment_count_);
  Message& slot = c.segments[offset / per_segment_];
  if (slot.payload.size() != 0) return drop("duplicate");
  slot = std::move(m);
  ++c.received;
}

// Σ w_i Δ_i of round r's contributors `from` into mean_, in ring order (this member's own
// payloads decoded like the others'); returns Σ w_i. The first round's are models, weighed 1.
float DeferredOuterSync::sum(std::uint64_t r, const std::vector<PeerId>& from, std::map<PeerId, Contribution>& arrived) {
  const protocols::Codec& decoder = r == first_round_ ? *exact_.front() : *checker_;
  std::fill(mean_.begin(), mean_.end(), 0.0f);
  float total = 0.0f;
  for (PeerId p : from) {
    const bool self = p == transport_.self();
    const std::uint64_t base = self ? own_.base : others_.at(p).base;
    const float w = spec_.staleness_scaling ? 1.0f / static_cast<float>(1 + (r - base)) : 1.0f;
    for (std::size_t s = 0; s < segment_count_; ++s) {
      const std::size_t begin = s * per_segment_, count = std::min(per_segment_, change_.size() - begin);
      const protocols::ByteSpan payload = self ? protocols::ByteSpan(payloads_[s].data(), payloads_[s].size())
                                               : arrived[p].segments[s].bytes();
      if (decoder.decode(payload, {change_.data() + begin, count}, protocols::Apply::assign) != protocols::Error::ok)
        STARLING_GOSSIP_THROW(InvalidArgument, "a payload checked on arrival no longer decodes");
    }
    for (std::size_t i = 0; i < mean_.size(); ++i) mean_[i] += w * change_[i];
    total += w;
  }
  return total;
}

// Round r's outer step on x₀ and u from its contributors' pseudo-gradients.
void DeferredOuterSync::step(std::uint64_t r) {
  const std::vector<PeerId> from = contributors(r);
  std::map<PeerId, Contribution> arrived = std::move(arrived_[r]);
  arrived_.erase(arrived_.begin(), arrived_.upper_bound(r));
  next_round_ = r + 1;
  const float total = sum(r, from, arrived);
  for (PeerId p : from) {
    if (p == transport_.self()) continue;
    others_[p] = Member{r + 1, arrived[p].plan->next, false};
  }
  if (from.empty()) return;  // every member is still training: x₀ stays
  const float lr = static_cast<float>(spec_.outer_lr), beta = static_cast<float>(spec_.outer_momentum);
  for (std::size_t i = 0; i < mean_.size(); ++i)
    start_[i] -= outer_update(mean_[i] / total, velocity_[i], lr, beta, spec_.outer_nesterov);
}

void DeferredOuterSync::finish(std::uint64_t iteration) {
  if (!kept_.started) return;
  std::vector<std::uint8_t> plan;
  protocols::encode_outer_plan({own_.base, protocols::kNoMoreRounds, iteration, 0.0}, plan);
  protocols::FrameHeader h;
  h.type = protocols::MessageType::outer_plan;
  h.round = own_.next;
  for (const auto& [peer, member] : others_)
    if (!member.finished) transport_.send(peer, h, protocols::ByteSpan(plan.data(), plan.size()));
}

bool DeferredOuterSync::restore(const std::vector<float>& values) {
  if (!kept_.restore(values)) return false;
  first_round_ = next_round_ - 1;  // no round of models: the first one steps pseudo-gradients
  own_ = Member{next_round_, next_round_, false};
  for (auto& [peer, member] : others_) member = Member{next_round_, next_round_, false};
  return true;
}

std::vector<protocols::Span<float>> DeferredOuterSync::shared_state() {
  if (!kept_.started) return {};
  return {start_, velocity_};
}

}  // namespace starling::gossip
