// Asynchronous pairwise gossip with a staleness bound (gossip/algorithms/async_gossip.h).
#include "gossip/algorithms/async_gossip.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "gossip/algorithms/float_segments.h"
#include "gossip/transport/error.h"
#include "protocols/membership_messages.h"

namespace starling::gossip {

namespace {

using protocols::MessageType;

bool is_decline(const Message& m) { return m.header.tensor_length == 0 && m.payload.size() == 0; }

std::uint64_t distance(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

AsyncGossip::AsyncGossip(Transport& transport, std::vector<PeerId> neighbours, AsyncGossipOptions options)
    : transport_(transport),
      options_(options),
      per_segment_(std::max<std::size_t>(1, options.segment_bytes / sizeof(float))),
      step_(options.first_step),
      rng_(options.seed ^ (0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(transport.self()) + 1))) {
  for (PeerId n : neighbours) {
    if (n == transport_.self()) STARLING_GOSSIP_THROW(InvalidArgument, "a peer cannot be its own neighbour");
    if (neighbours_.count(n)) STARLING_GOSSIP_THROW(InvalidArgument, "neighbour " + std::to_string(n) + " repeated");
    if (!transport_.reachable(n))
      STARLING_GOSSIP_THROW(InvalidArgument, "no route to neighbour " + std::to_string(n));
    neighbours_[n].step = options_.first_step;
  }
}

void AsyncGossip::fix_length(std::size_t length) {
  if (length == 0) STARLING_GOSSIP_THROW(InvalidArgument, "empty vector");
  if (!length_) length_ = length;
  if (*length_ != length)
    STARLING_GOSSIP_THROW(InvalidArgument, "vector length changed from " + std::to_string(*length_) + " to " +
                                               std::to_string(length));
}

std::uint64_t AsyncGossip::run(protocols::Span<float> x, std::uint64_t step) {
  if (finished_) STARLING_GOSSIP_THROW(InvalidArgument, "run() after finish()");
  fix_length(x.size());
  if (announced_ && step < step_)
    STARLING_GOSSIP_THROW(InvalidArgument, "step went back from " + std::to_string(step_) + " to " +
                                               std::to_string(step));
  const auto deadline = Transport::Clock::now() + options_.timeout;
  // 1. Tell the neighbours where this peer is; it is what their staleness bound waits for.
  step_ = step;
  if (announced_ != step_) {
    for (const auto& [id, n] : neighbours_)
      if (!n.left) announce(MessageType::heartbeat, id);
    announced_ = step_;
  }
  // 2. Hold back (serving meanwhile) while more than s steps ahead of the slowest neighbour.
  wait_for_staleness(x, deadline);
  const std::optional<std::uint64_t> slowest = slowest_live();
  const std::uint64_t gap = slowest && step_ > *slowest ? step_ - *slowest : 0;
  stats_.max_gap = std::max(stats_.max_gap, gap);
  stats_.gap_sum += gap, ++stats_.runs;
  // 3. Average with one random live neighbour.
  if (const std::optional<PeerId> partner = pick_partner()) exchange(x, *partner, deadline);
  return gap;
}

std::size_t AsyncGossip::serve(protocols::Span<float> x) {
  fix_length(x.size());
  std::size_t answered = 0;
  while (std::optional<Message> m = transport_.try_receive()) answered += handle(std::move(*m), x);
  return answered;
}

void AsyncGossip::finish(protocols::Span<float> x) {
  fix_length(x.size());
  const auto deadline = Transport::Clock::now() + options_.timeout;
  if (!finished_) {
    for (const auto& [id, n] : neighbours_) announce(MessageType::leave, id);
    finished_ = true;
  }
  // A neighbour sends nothing after its leave, so every request it made is answered by then.
  const auto anyone_left = [this] {
    return std::any_of(neighbours_.begin(), neighbours_.end(), [this](const auto& n) { return live(n.first, n.second); });
  };
  while (anyone_left()) handle_until(deadline, x);
}

bool AsyncGossip::live(PeerId id, const Neighbour& n) const {
  return !n.left && (!options_.reachable || options_.reachable(id));
}

// Handles the next message, or returns after one poll interval without one, so that the
// caller looks at reachability again; TimeoutError at the deadline.
void AsyncGossip::handle_until(Transport::Clock::time_point deadline, protocols::Span<float> x) {
  const auto now = Transport::Clock::now();
  if (now >= deadline)
    STARLING_GOSSIP_THROW(TimeoutError, "async gossip: deadline passed on peer " + std::to_string(transport_.self()));
  if (std::optional<Message> m = transport_.try_receive(std::min(deadline, now + options_.poll))) handle(std::move(*m), x);
}

void AsyncGossip::announce(MessageType type, PeerId to) {
  protocols::FrameHeader h;
  h.type = type;
  h.round = step_;
  if (type != MessageType::leave) return transport_.send(to, h, protocols::ByteSpan());
  std::vector<std::uint8_t> reason;  // a leave says why, as membership expects
  protocols::encode_leave(protocols::LeaveReason::shutdown, reason);
  transport_.send(to, h, protocols::ByteSpan(reason.data(), reason.size()));
}

void AsyncGossip::wait_for_staleness(protocols::Span<float> x, Transport::Clock::time_point deadline) {
  bool waited = false;
  for (auto slowest = slowest_live(); slowest && step_ > *slowest + options_.max_staleness; slowest = slowest_live()) {
    waited = true;
    handle_until(deadline, x);
  }
  if (waited) ++stats_.waits;
}

std::optional<std::uint64_t> AsyncGossip::slowest_live() const {
  std::optional<std::uint64_t> slowest;
  for (const auto& [id, n] : neighbours_)
    if (live(id, n)) slowest = slowest ? std::min(*slowest, n.step) : n.step;
  return slowest;
}

std::optional<PeerId> AsyncGossip::pick_partner() {
  std::vector<PeerId> live;
  for (const auto& [id, n] : neighbours_)
    if (this->live(id, n)) live.push_back(id);
  if (live.empty()) return std::nullopt;
  std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
  return live[pick(rng_)];
}

void AsyncGossip::exchange(protocols::Span<float> x, PeerId partner, Transport::Clock::time_point deadline) {
  Outgoing& out = outgoing_.emplace();
  out.partner = partner;
  out.seq = ++seq_;
  out.snapshot.assign(x.begin(), x.end());
  out.reply.resize(segment_count(*length_, per_segment_));
  send_vector(partner, MessageType::gossip_push, out.seq, out.snapshot);
  // Serve everyone (the partner included) while waiting: two peers waiting on each other
  // without serving would deadlock. A partner that stops answering is given up on.
  while (!outgoing_->done) {
    if (options_.reachable && !options_.reachable(partner)) {  // a partner that left still answers
      ++drops_["abandoned_exchange"];
      break;
    }
    handle_until(deadline, x);
  }
  outgoing_.reset();
}

// Returns the number of requests answered (0 or 1).
std::size_t AsyncGossip::handle(Message m, protocols::Span<float> x) {
  const auto it = neighbours_.find(m.from);
  if (it == neighbours_.end()) {
    ++drops_["not_a_neighbour"];
    return 0;
  }
  Neighbour& n = it->second;
  switch (m.header.type) {
    case MessageType::heartbeat: n.step = std::max(n.step, m.header.round); return 0;
    case MessageType::leave:
      n.step = std::max(n.step, m.header.round);
      n.left = true;
      return 0;
    case MessageType::gossip_push: return on_request(std::move(m), x);
    case MessageType::gossip_pull_reply: on_reply(std::move(m), x); return 0;
    default: ++drops_["unexpected_type"]; return 0;
  }
}

std::size_t AsyncGossip::on_request(Message m, protocols::Span<float> x) {
  Neighbour& n = neighbours_[m.from];
  const std::uint64_t seq = m.header.round;
  const char* problem = n.left ? "request_after_leave" : segment_problem(m);
  if (!problem && seq < n.request_seq) problem = "stale_request";
  if (!problem && seq == n.request_seq && n.request.empty()) problem = "duplicate_request";
  if (problem) {
    ++drops_[problem];
    return 0;
  }
  if (seq > n.request_seq) {  // a new request; a partial older one can no longer complete
    if (n.request_received > 0) ++drops_["abandoned_request"];
    n.request_seq = seq;
    n.request.clear();
    n.request.resize(segment_count(*length_, per_segment_));
    n.request_received = 0;
  }
  Message& slot = n.request[m.header.tensor_offset / per_segment_];
  if (slot.header.type == MessageType::gossip_push) {
    ++drops_["duplicate_segment"];
    return 0;
  }
  slot = std::move(m);
  if (++n.request_received < n.request.size()) return 0;
  return respond(slot.from, x);
}

// Answers a complete request: the reply carries x_j before mixing, and x_j mixes at once,
// so the pair's exchange is atomic on this side.
std::size_t AsyncGossip::respond(PeerId from, protocols::Span<float> x) {
  Neighbour& n = neighbours_[from];
  std::vector<Message> request = std::move(n.request);
  n.request.clear();
  n.request_received = 0;
  const bool crossing = outgoing_ && !outgoing_->done && outgoing_->partner == from;
  if (crossing && transport_.self() < from) {
    protocols::FrameHeader h;
    h.type = MessageType::gossip_pull_reply;
    h.flags = protocols::kFlagLastChunk;
    h.round = n.request_seq;
    transport_.send(from, h, protocols::ByteSpan());
    ++stats_.declined;
    return 0;
  }
  announce(MessageType::heartbeat, from);
  send_vector(from, MessageType::gossip_pull_reply, n.request_seq, x);
  mix_in(x, request, x, n.step);
  ++stats_.served;
  return 1;
}

void AsyncGossip::on_reply(Message m, protocols::Span<float> x) {
  if (!outgoing_ || outgoing_->done || m.from != outgoing_->partner || m.header.round != outgoing_->seq) {
    ++drops_["unexpected_reply"];
    return;
  }
  Outgoing& out = *outgoing_;
  if (is_decline(m) && out.received == 0 && (m.header.flags & protocols::kFlagLastChunk)) {
    out.done = true;
    ++stats_.refused;
    return;
  }
  if (const char* problem = segment_problem(m)) {
    ++drops_[problem];
    return;
  }
  Message& slot = out.reply[m.header.tensor_offset / per_segment_];
  if (slot.header.type == MessageType::gossip_pull_reply) {
    ++drops_["duplicate_segment"];
    return;
  }
  slot = std::move(m);
  if (++out.received < out.reply.size()) return;
  mix_in(x, out.reply, out.snapshot, neighbours_[out.partner].step);
  out.done = true;
  ++stats_.exchanges;
}

// Why a request or reply segment cannot belong to a vector of this length; nullptr if it can.
const char* AsyncGossip::segment_problem(const Message& m) const {
  const protocols::FrameHeader& h = m.header;
  if (h.codec != protocols::CodecId::none) return "codec_mismatch";
  const std::size_t segments = segment_count(*length_, per_segment_);
  const std::size_t s = h.tensor_offset / per_segment_;
  const std::size_t begin = s * per_segment_;
  if (s >= segments || h.tensor_offset != begin) return "segment_out_of_range";
  const std::size_t count = std::min(per_segment_, *length_ - begin);
  if (h.tensor_length != count || m.payload.size() != count * sizeof(float)) return "segment_out_of_range";
  if (((h.flags & protocols::kFlagLastChunk) != 0) != (s + 1 == segments)) return "segment_out_of_range";
  if (!all_finite(m)) return "non_finite";
  return nullptr;
}

void AsyncGossip::send_vector(PeerId to, MessageType type, std::uint64_t seq, protocols::Span<const float> x) {
  const std::size_t n = segment_count(x.size(), per_segment_);
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t begin = s * per_segment_;
    const std::size_t count = std::min(per_segment_, x.size() - begin);
    protocols::FrameHeader h;
    h.type = type;
    h.flags = s + 1 == n ? protocols::kFlagLastChunk : 0;
    h.round = seq;
    h.tensor_offset = begin;
    h.tensor_length = count;
    transport_.send(to, h, protocols::ByteSpan(reinterpret_cast<const std::uint8_t*>(x.data() + begin),
                                               count * sizeof(float)));
  }
}

// x += (other − base) / (2τ); both sides of a pair use the same τ, so their deltas cancel.
void AsyncGossip::mix_in(protocols::Span<float> x, const std::vector<Message>& segments,
                         protocols::Span<const float> base, std::uint64_t other_step) {
  const double tau = options_.staleness_scaling ? std::max<std::uint64_t>(1, distance(step_, other_step)) : 1.0;
  const float scale = static_cast<float>(0.5 / tau);
  for (const Message& seg : segments) {
    const auto* src = static_cast<const unsigned char*>(seg.payload.data());
    const std::size_t begin = seg.header.tensor_offset;
    for (std::size_t i = 0; i < seg.header.tensor_length; ++i)
      x[begin + i] += scale * (load_float(src, i) - base[begin + i]);
  }
}

}  // namespace starling::gossip
