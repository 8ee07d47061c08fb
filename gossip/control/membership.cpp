// Membership and failure detection (gossip/control/membership.h).
#include "gossip/control/membership.h"

#include <algorithm>
#include <utility>

#include "gossip/control/watch_overlay.h"
#include "gossip/transport/error.h"

namespace starling::gossip {

namespace {

using protocols::MessageType;

std::string ms_text(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

const char* leave_text(protocols::LeaveReason reason) {
  switch (reason) {
    case protocols::LeaveReason::shutdown: return "shutdown";
    case protocols::LeaveReason::failure: return "failure";
    case protocols::LeaveReason::evicted: return "evicted";
  }
  return "unknown";
}

const char* notice_text(protocols::NoticeKind kind) {
  switch (kind) {
    case protocols::NoticeKind::timed_out: return "timed out";
    case protocols::NoticeKind::left: return "left";
    case protocols::NoticeKind::finished: return "finished";
    case protocols::NoticeKind::suspect: return "suspected";
    case protocols::NoticeKind::vouch: return "vouched for";
  }
  return "unknown";
}

protocols::FrameHeader membership_header(MessageType type) {
  protocols::FrameHeader h;
  h.type = type;
  return h;
}

}  // namespace

const char* to_string(PeerState state) { return state == PeerState::alive ? "alive" : "dead"; }

Membership::Membership(Transport& transport, MembershipOptions options)
    : transport_(transport), options_(options) {
  if (options_.heartbeat_interval.count() <= 0 || options_.failure_timeout <= options_.heartbeat_interval)
    STARLING_GOSSIP_THROW(InvalidArgument, "membership: need 0 < heartbeat_interval < failure_timeout");
}

void Membership::track(PeerId peer, Clock::time_point now, std::string endpoint, std::string public_key) {
  PeerRecord& r = peers_[peer];
  r.state = PeerState::alive;
  r.left = false;
  r.heard = false;
  r.suspected.reset();
  r.last_seen = now;
  if (!endpoint.empty()) r.endpoint = std::move(endpoint);
  if (!public_key.empty()) r.public_key = std::move(public_key);
}

void Membership::forget(PeerId peer) { peers_.erase(peer); }

void Membership::watch(const std::vector<PeerId>& peers, Clock::time_point now, std::vector<PeerId> ring) {
  ring_ = std::move(ring);
  std::set<PeerId> next(peers.begin(), peers.end());
  next.erase(transport_.self());
  for (PeerId p : next) {
    const auto it = peers_.find(p);
    if (it != peers_.end() && !watches(p)) it->second.last_seen = std::max(it->second.last_seen, now);
  }
  watched_ = std::move(next);
  if (transport_.heartbeats()) transport_.watch(std::vector<PeerId>(watched_->begin(), watched_->end()));
}

void Membership::started() {
  if (!starting_) return;
  starting_ = false;
  refresh_from_transport();  // the start may have ended on a heartbeat not yet taken in
  for_each_watched(peers_, watched_, [&](PeerId peer, const PeerRecord& r) {
    if (r.state == PeerState::dead && !r.heard)
      to_pass_on_.push_back(protocols::DeathNotice{peer, protocols::NoticeKind::timed_out, 0, 0});
  });
}

std::vector<PeerId> Membership::watched() const {
  if (watched_) return {watched_->begin(), watched_->end()};
  std::vector<PeerId> all;
  for (const auto& [peer, r] : peers_) all.push_back(peer);
  return all;
}

void Membership::finished(PeerId peer, std::uint64_t round, std::uint64_t iteration) {
  peers_[peer].finished = protocols::DeathNotice{peer, protocols::NoticeKind::finished, round, iteration};
}

void Membership::revive(PeerId peer, Clock::time_point now, const std::string& reason) {
  PeerRecord& r = peers_[peer];
  if (r.state == PeerState::alive) return;
  r.left = false;
  r.last_seen = now;
  change(peer, r, PeerState::alive, reason);
}

// Every death this peer learns is passed on once (the transition happens once).
void Membership::change(PeerId peer, PeerRecord& record, PeerState state, std::string reason,
                        std::optional<protocols::DeathNotice> notice) {
  record.state = state;
  record.suspected.reset();
  if (state == PeerState::dead) {
    const bool own = !notice;  // not a notice passed on: this peer's own finding
    if (!notice) notice = record.finished;
    if (!notice) notice = protocols::DeathNotice{peer, record.left ? protocols::NoticeKind::left : protocols::NoticeKind::timed_out, 0, 0};
    if (!own || record.heard || !starting_) to_pass_on_.push_back(*notice);
  }
  changes_.push_back(ViewChange{peer, state, std::move(reason), state == PeerState::dead ? notice : std::nullopt});
}

// Whether `peer`, silent past its timeout, is still only suspected: its other watchers are
// asked once (the first time), and their answers waited for probe_timeout.
bool Membership::suspect(PeerId peer, PeerRecord& r, Clock::time_point now) {
  if (options_.indirect_probes <= 0 || ring_.empty()) return false;
  if (r.suspected) return now < *r.suspected + options_.probe_timeout;
  r.suspected = now;
  int asked = 0;
  for (PeerId w : watch_overlay(ring_, peer)) {
    if (asked == options_.indirect_probes) break;
    if (w == transport_.self() || !alive(w) || !transport_.reachable(w)) continue;
    send_notice_to(w, protocols::DeathNotice{peer, protocols::NoticeKind::suspect, 0, 0});
    ++asked;
  }
  return asked > 0;
}

// Vouches for `about` to `asker` when this peer heard it within its failure timeout.
void Membership::answer_probe(PeerId asker, PeerId about, Clock::time_point now) {
  refresh_from_transport();
  const auto it = peers_.find(about);
  const bool heard = about == transport_.self() ||
                     (it != peers_.end() && it->second.heard && it->second.state == PeerState::alive &&
                      now - it->second.last_seen < options_.failure_timeout);
  if (heard && transport_.reachable(asker))
    send_notice_to(asker, protocols::DeathNotice{about, protocols::NoticeKind::vouch, 0, 0});
}

void Membership::send_notice_to(PeerId to, const protocols::DeathNotice& notice) {
  protocols::Heartbeat beat;
  beat.notices = {notice};
  std::vector<std::uint8_t> payload;
  protocols::encode_heartbeat(beat, payload);
  transport_.send(to, membership_header(MessageType::heartbeat), payload);
}

// A peer that left passes nothing on: a message from it would make the others take it for
// alive again.
void Membership::send_notices() {
  if (to_pass_on_.empty() || left_) return;
  protocols::Heartbeat beat;
  beat.notices = std::exchange(to_pass_on_, {});
  std::vector<std::uint8_t> payload;
  protocols::encode_heartbeat(beat, payload);
  for_each_watched(peers_, watched_, [&](PeerId peer, const PeerRecord& r) {
    if (r.state == PeerState::alive && transport_.reachable(peer))
      transport_.send(peer, membership_header(MessageType::heartbeat), payload);
  });
}

void Membership::apply_notices(PeerId from, const protocols::Heartbeat& beat, Clock::time_point now) {
  for (const protocols::DeathNotice& n : beat.notices) {
    if (n.kind == protocols::NoticeKind::suspect) {
      answer_probe(from, n.peer, now);
      continue;
    }
    if (n.kind == protocols::NoticeKind::vouch) {
      const auto it = peers_.find(n.peer);
      if (it != peers_.end() && it->second.suspected) it->second.suspected.reset(), it->second.vouched = now;
      continue;
    }
    if (n.peer == transport_.self()) continue;  // a false suspicion: the view change settles it
    PeerRecord& r = peers_[n.peer];
    if (n.kind == protocols::NoticeKind::finished) r.finished = n;
    if (r.state != PeerState::alive) continue;
    r.left = n.kind != protocols::NoticeKind::timed_out;
    r.last_seen = now;  // what it sent before this notice does not bring it back
    change(n.peer, r, PeerState::dead, std::string(notice_text(n.kind)) + ", says peer " + std::to_string(from), n);
  }
}

void Membership::poll(Clock::time_point now) {
  if (!transport_.heartbeats() && now >= next_heartbeat_) send_heartbeats(now);
  discount_own_stall(now);
  refresh_from_transport();
  for_each_watched(peers_, watched_, [&](PeerId peer, PeerRecord& r) {
    const auto silent = now - std::max(r.last_seen, r.vouched);
    const auto allowed = allowed_silence(r);
    if (r.state == PeerState::alive && silent >= allowed && !suspect(peer, r, now))
      change(peer, r, PeerState::dead,
             r.heard ? "no message for " + ms_text(silent) + " (failure timeout " + ms_text(allowed) + ")"
                     : "never heard from in " + ms_text(silent) + " (start timeout " + ms_text(allowed) + ")");
  });
  send_notices();
}

void Membership::discount_own_stall(Clock::time_point now) {
  const auto gap = now - last_poll_;
  if (last_poll_ != Clock::time_point{} && gap > options_.failure_timeout / 2)
    for (auto& [peer, r] : peers_) r.last_seen = std::min(now, r.last_seen + gap);
  last_poll_ = now;
}

std::chrono::milliseconds Membership::allowed_silence(const PeerRecord& r) const {
  if (r.heard || options_.start_grace.count() <= 0) return options_.failure_timeout;
  return std::max(options_.start_grace, options_.failure_timeout);
}

// What the I/O thread heard, heartbeats included, counts as if this thread had seen it.
void Membership::refresh_from_transport() {
  for (const auto& [peer, heard] : transport_.liveness()) {
    const auto it = peers_.find(peer);
    if (it == peers_.end() || heard.last_heard <= it->second.last_seen) continue;
    PeerRecord& r = it->second;
    r.last_seen = heard.last_heard;
    r.heard = true;
    r.suspected.reset();
    if (r.state == PeerState::dead && !r.left) change(peer, r, PeerState::alive, "heard again after timing out");
  }
}

void Membership::send_heartbeats(Clock::time_point now) {
  protocols::Heartbeat beat;
  beat.clock_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  // last_round stays 0: the owner's round travels in the I/O thread's heartbeats
  // (Transport::announce()); these are the fallback for a transport without them.
  std::vector<std::uint8_t> payload;
  protocols::encode_heartbeat(beat, payload);
  for_each_watched(peers_, watched_, [&](PeerId peer, const PeerRecord& r) {
    if (!r.left && transport_.reachable(peer)) transport_.send(peer, membership_header(MessageType::heartbeat), payload);
  });
  // Next beat one interval from now, not from the missed slot: no bursts after a stall.
  next_heartbeat_ = now + options_.heartbeat_interval;
}

bool Membership::observe(const Message& message, Clock::time_point now) {
  const bool tracked = peers_.count(message.from) != 0;
  PeerRecord& r = peers_[message.from];
  r.last_seen = now;
  r.heard = true;
  r.suspected.reset();
  if (message.header.type == MessageType::leave) {
    handle_leave(message, r);
    return true;
  }
  if (!tracked) {
    changes_.push_back(ViewChange{message.from, PeerState::alive, "first message from an untracked peer", std::nullopt});
  } else if (r.state == PeerState::dead) {
    change(message.from, r, PeerState::alive, r.left ? "spoke again after leaving" : "spoke again after timing out");
  }
  r.left = false;
  if (message.header.type != MessageType::heartbeat) return false;
  const protocols::Result<protocols::Heartbeat> beat = protocols::decode_heartbeat(message.bytes());
  if (!beat) ++malformed_;
  else apply_notices(message.from, *beat, now);
  return true;
}

void Membership::handle_leave(const Message& message, PeerRecord& r) {
  protocols::Result<protocols::LeaveReason> reason = protocols::decode_leave(message.bytes());
  if (!reason) ++malformed_;
  r.left = true;
  if (r.state == PeerState::alive)
    change(message.from, r, PeerState::dead,
           std::string("left: ") + (reason ? leave_text(*reason) : "reason unreadable"));
}

void Membership::leave(protocols::LeaveReason reason) {
  left_ = true;
  std::vector<std::uint8_t> payload;
  protocols::encode_leave(reason, payload);
  for_each_watched(peers_, watched_, [&](PeerId peer, const PeerRecord&) {
    if (transport_.reachable(peer)) transport_.send(peer, membership_header(MessageType::leave), payload);
  });
}

std::vector<ViewChange> Membership::take_changes() { return std::exchange(changes_, {}); }

Membership::Clock::time_point Membership::next_due() const {
  Clock::time_point due = transport_.heartbeats() ? Clock::time_point::max() : next_heartbeat_;
  for_each_watched(peers_, watched_, [&](PeerId, const PeerRecord& r) {
    if (r.state == PeerState::alive)
      due = std::min(due, r.suspected ? *r.suspected + options_.probe_timeout
                                      : std::max(r.last_seen, r.vouched) + allowed_silence(r));
  });
  return due;
}

bool Membership::alive(PeerId peer) const {
  const auto it = peers_.find(peer);
  return it != peers_.end() && it->second.state == PeerState::alive;
}

Message receive_data(Transport& transport, Membership& membership, Membership::Clock::time_point deadline) {
  using Clock = Membership::Clock;
  for (;;) {
    membership.poll(Clock::now());
    std::optional<Message> m = transport.try_receive(std::min(deadline, membership.next_due()));
    if (m) {
      if (!membership.observe(*m, Clock::now())) return std::move(*m);
    } else if (Clock::now() >= deadline) {
      STARLING_GOSSIP_THROW(TimeoutError, "receive_data: deadline passed on peer " + std::to_string(transport.self()));
    }
  }
}

}  // namespace starling::gossip
