// The peer's control plane inside every receive (gossip/control/control_plane.h).
#include "gossip/control/control_plane.h"

#include <algorithm>
#include <cstdio>

#include "gossip/control/invitation.h"
#include "gossip/control/join.h"
#include "gossip/control/model_transfer.h"
#include "gossip/transport/error.h"
#include "gossip/transport/ring_common.h"
#include "protocols/state_hash_messages.h"

namespace starling::gossip {

namespace {

using protocols::MessageType;
using protocols::ViewKind;
using protocols::ViewMessage;

// Data frames whose round carries the view (view.h).
bool carries_view(MessageType type) {
  return type == MessageType::gossip_push || type == MessageType::gossip_pull_reply ||
         type == MessageType::allreduce_segment || type == MessageType::model_update ||
         type == MessageType::outer_plan;
}

std::string seconds_text(Transport::Clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

constexpr std::chrono::milliseconds kAnswerEvery{200};
// How long the route that carried a bootstrap answer stays open (the newcomer is then long
// gone from its temporary port).
constexpr std::chrono::seconds kHandshakeRouteLife{10};

}  // namespace

ControlPlane::ControlPlane(Transport& transport, const std::vector<PeerId>& peers, ControlOptions options)
    : transport_(transport), peers_(peers), options_(std::move(options)), membership_(transport, options_.membership) {
  const auto now = Clock::now();
  for (PeerId p : peers_) {
    const auto at = options_.endpoints.find(p);
    if (p != transport_.self())
      membership_.track(p, now, at == options_.endpoints.end() ? std::string() : at->second, transport_.public_key_of(p));
  }
  if (!options_.watch.empty()) membership_.watch(options_.watch, now, peers_);
  view_.members = peers_;
  std::sort(view_.members.begin(), view_.members.end());
  // Failure detection needs a look a tenth of a heartbeat apart, not more often: a thousand
  // peers waiting in one process each look that often.
  transport_.set_hook(this, std::max(std::chrono::milliseconds(50), options_.membership.heartbeat_interval / 10));
}

ControlPlane::~ControlPlane() { transport_.set_hook(nullptr); }

void ControlPlane::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

bool ControlPlane::intercept(Message& m) {
  const auto now = Clock::now();
  switch (m.header.type) {
    case MessageType::heartbeat:  // asynchronous gossip's step announcements
      membership_.observe(m, now);
      return options_.views;
    case MessageType::leave:
      membership_.observe(m, now);
      note_changes();
      return options_.views;
    case MessageType::hello: on_hello(m); return true;
    case MessageType::view: on_view(m); return true;
    case MessageType::state_request: on_state_request(m); return true;
    case MessageType::state_manifest:
    case MessageType::state_transfer:
      if (!taking_state_) count("stale_state_answer");
      return !taking_state_;
    case MessageType::state_hash: return on_state_hash(m);
    default: break;
  }
  if (options_.views && carries_view(m.header.type)) return filter_by_view(m);
  return false;
}

void ControlPlane::idle() {
  close_handshake_routes();
  membership_.poll(Clock::now());
  note_changes();
  if (options_.views) check_heartbeat_views();
  name_stragglers();
  check_round_deadline();
  note_relay();
  if (armed_ && !event_.empty()) STARLING_GOSSIP_THROW(MembershipChanged, event_);
}

// A peer behind NAT says when its frames to others behind NAT go through another relay.
void ControlPlane::note_relay() {
  const std::optional<PeerId> relay = transport_.relay();
  if (relay == relay_) return;
  relay_ = relay;
  log(relay ? "relays: frames to peers behind NAT go through peer " + std::to_string(*relay)
            : std::string("relays: no reachable peer to relay through"));
}

void ControlPlane::raise(const std::string& why) {
  if (event_.empty()) event_ = why;
  if (armed_) STARLING_GOSSIP_THROW(MembershipChanged, why);
}

std::string ControlPlane::take_event() { return std::exchange(event_, {}); }

// Logs every transition; with views, a member that dies without having finished changes the view.
void ControlPlane::note_changes() {
  for (const ViewChange& c : membership_.take_changes()) {
    if (c.notice && c.notice->kind == protocols::NoticeKind::finished && !finished_.count(c.peer))
      finished_[c.peer] = ViewMessage{ViewKind::status, protocols::kViewFinished, view_.number, c.notice->round,
                                      c.notice->iteration, 0, {}};
    // At scale every peer hears every other finish: a finished peer's leave is no news.
    const bool routine = c.state == PeerState::dead && finished_.count(c.peer);
    if (!routine) log("peer " + std::to_string(c.peer) + " is " + to_string(c.state) + ": " + c.reason);
    if (options_.views && c.state == PeerState::dead && view_.contains(c.peer) && !finished_.count(c.peer))
      raise("member " + std::to_string(c.peer) + " died (" + c.reason + ")");
  }
}

// A live peer whose heartbeats name a newer view went on without this one.
void ControlPlane::check_heartbeat_views() {
  for (const auto& [peer, heard] : transport_.liveness()) {
    if (!heard.heartbeat || view_tag(heard.view) <= view_tag(view_.number) || !membership_.alive(peer)) continue;
    auto& seen = newer_view_seen_[peer];
    if (seen >= heard.view) continue;
    seen = heard.view;
    raise("peer " + std::to_string(peer) + " is in view " + std::to_string(heard.view));
  }
}

bool ControlPlane::filter_by_view(Message& m) {
  const std::uint64_t v = view_of_round(m.header.round), current = view_tag(view_.number);
  if (v == current) return false;
  if (v < current) {
    count("stale_view");
    return true;
  }
  if (held_.size() >= kMaxEarlyMessages) {
    count("held_overflow");
    return true;
  }
  held_.push_back(std::move(m));
  return true;
}

void ControlPlane::on_hello(const Message& m) {
  if (m.header.round == kBootstrapRound) return on_bootstrap(m);
  if (m.header.round == kBootstrapReplyRound) return count("stray_bootstrap_reply");
  std::optional<protocols::Hello> swarm_hello;
  if (m.header.round == kSwarmJoinRound && !(swarm_hello = admit_stranger(m))) return;
  membership_.observe(m, Clock::now());
  if (is_join_reply(m.header)) {
    protocols::Result<JoinReply> reply = decode_join_reply(m.bytes());
    if (reply && reply->status == JoinStatus::shape_mismatch) refused_ = true;
    return;
  }
  protocols::Result<protocols::Hello> hello =
      swarm_hello ? protocols::Result<protocols::Hello>(std::move(*swarm_hello)) : protocols::decode_hello(m.bytes());
  if (!hello) return count("bad_hello");
  if (protocols::check_shape(*hello, options_.shape) != protocols::Error::ok) {
    count("shape_mismatch");
    JoinReply refusal{JoinStatus::shape_mismatch, {}};
    std::vector<std::uint8_t> payload;
    encode_join_reply(refusal, payload);
    protocols::FrameHeader h;
    h.type = MessageType::hello;
    h.round = kJoinReplyRound;
    transport_.send(m.from, h, protocols::ByteSpan(payload.data(), payload.size()));
    return log("peer " + std::to_string(m.from) + " has another model shape: its join is refused");
  }
  if (!options_.views) return;
  if (admitted(m.from)) return count("hello_after_admission");
  const bool fresh = joiners_.insert(m.from).second;
  if (fresh) log("peer " + std::to_string(m.from) + " asks to join");
  raise("peer " + std::to_string(m.from) + " asks to join");
}

// A newcomer to the swarm asks for an id: refused (naming why), sent to the leader, or given
// one and the live peers (join.h).
void ControlPlane::on_bootstrap(const Message& m) {
  if (!options_.swarm) return count("bootstrap_not_a_swarm");
  protocols::Result<BootstrapRequest> request = decode_bootstrap_request(m.bytes());
  if (!request || m.from < kProvisionalIds) return count("bad_bootstrap");
  BootstrapReply reply;
  reply.reason = bootstrap_refusal(*request, *options_.swarm);
  std::optional<PeerId> leader;
  for (PeerId p : view_.members)  // ascending: the lowest live one a newcomer can dial
    if (p == transport_.self() ? options_.shape.endpoint != kBehindNat
                               : membership_.alive(p) && !finished_.count(p) && !behind_nat(p)) {
      leader = p;
      break;
    }
  const auto record = leader ? membership_.peers().find(*leader) : membership_.peers().end();
  if (!reply.reason.empty()) {
    reply.status = BootstrapStatus::refused;
    log("refused the newcomer at " + request->endpoint + ": " + reply.reason);
  } else if (leader && *leader != transport_.self() && record != membership_.peers().end() && !record->second.endpoint.empty()) {
    reply.status = BootstrapStatus::redirect;
    reply.view.push_back({*leader, record->second.endpoint, record->second.public_key});
  } else {
    reply.id = next_id();
    reply.view = live_view(transport_, membership_, m.from, options_.shape);
    log("the newcomer at " + request->endpoint + " is peer " + std::to_string(reply.id));
  }
  try {
    const bool fresh = !transport_.connected_to(m.from);
    send_bootstrap_reply(transport_, m.from, request->endpoint, peer_public_key(m).value_or(std::string()), reply);
    if (fresh) handshake_routes_.emplace_back(Clock::now() + kHandshakeRouteLife, m.from);
  } catch (const GossipError&) {
    count("bootstrap_unanswered");
  }
}

bool ControlPlane::behind_nat(PeerId peer) const {
  const auto record = membership_.peers().find(peer);
  return record != membership_.peers().end() && record->second.endpoint == kBehindNat;
}

void ControlPlane::close_handshake_routes() {
  const auto now = Clock::now();
  while (!handshake_routes_.empty() && handshake_routes_.front().first <= now) {
    transport_.disconnect(handshake_routes_.front().second);
    handshake_routes_.pop_front();
  }
}

// One above every id this peer knows of or has handed out; the leader alone hands them out,
// so two newcomers never get the same one while it leads.
PeerId ControlPlane::next_id() {
  PeerId next = std::max(next_id_, transport_.self() + 1);
  for (PeerId p : peers_) next = std::max(next, p + 1);
  for (PeerId p : view_.members) next = std::max(next, p + 1);
  for (const auto& [p, r] : membership_.peers())
    if (p < kProvisionalIds) next = std::max(next, p + 1);
  next_id_ = next + 1;
  return next;
}

// A join request in an open swarm: its hello when the invitation holds (the stranger is
// then connected back to, tracked and one of this peer's peers), nullopt otherwise.
std::optional<protocols::Hello> ControlPlane::admit_stranger(const Message& m) {
  if (!options_.swarm) return count("swarm_join_not_a_swarm"), std::nullopt;
  protocols::Result<SwarmJoin> join = decode_swarm_join(m.bytes());
  if (!join || join->hello.endpoint.empty() || m.from >= kProvisionalIds) return count("bad_hello"), std::nullopt;
  const std::string why = check_invitation(join->invitation, options_.swarm->owner_key, options_.swarm->job_id, unix_now());
  if (!why.empty()) {
    count("swarm_join_refused");
    if (refused_strangers_.insert(m.from).second) log("peer " + std::to_string(m.from) + " may not join: " + why);
    return std::nullopt;
  }
  // With CURVE the key the request came under is the newcomer's from now on (curve.h).
  const std::string key = peer_public_key(m).value_or(std::string());
  if (transport_.secure() && key.empty()) return count("bad_hello"), std::nullopt;
  if (!transport_.connected_to(m.from)) transport_.connect(m.from, join->hello.endpoint, key);
  if (std::find(peers_.begin(), peers_.end(), m.from) == peers_.end()) {
    peers_.push_back(m.from);
    membership_.track(m.from, Clock::now(), join->hello.endpoint, key);
  }
  return std::move(join->hello);
}

// A joiner repeats its hello until it adopts the view that admits it, so hellos it sent
// just before arrive after that view: from a member, soon after this peer took up the view
// or once the member's heartbeats name it, they ask for nothing, and a crowd of joiners
// would otherwise start one needless view change after another. Later hellos from a member
// whose heartbeats name an older view are news (it restarted before it was taken for
// dead). In view 0 every hello is news (no one has been admitted yet; a member started
// with --join asks in view 0).
bool ControlPlane::admitted(PeerId peer) const {
  if (view_.number == 0 || !view_.contains(peer)) return false;
  const auto settle = std::max(2 * options_.membership.heartbeat_interval, std::chrono::milliseconds(1000));
  if (Clock::now() - view_since_ < settle) return true;
  const auto heard = transport_.liveness();
  const auto it = heard.find(peer);
  return it != heard.end() && it->second.heartbeat && view_tag(it->second.view) >= view_tag(view_.number);
}

// Whether a view message still matters to a peer in view_: decisions beyond it, changes
// begun from it, and anything from outside it (a peer that wants in).
bool ControlPlane::relevant(PeerId from, const ViewMessage& m) const {
  switch (m.kind) {
    case ViewKind::decide: return m.view > view_.number;
    case ViewKind::prepare: return m.view >= view_.number;
    case ViewKind::status: return !view_.contains(from) || (m.flags & protocols::kViewJoining) || m.view >= view_.number;
  }
  return false;
}

void ControlPlane::on_view(const Message& m) {
  membership_.observe(m, Clock::now());
  protocols::Result<ViewMessage> view = protocols::decode_view(m.bytes());
  if (!view) return count(std::string("view_") + std::string(protocols::to_string(view.error())));
  if (view->kind == ViewKind::status && (view->flags & protocols::kViewFinished)) {
    finished_[m.from] = *view;
    membership_.finished(m.from, view->round, view->iteration);
    return;
  }
  if (!options_.views) return;
  if (!relevant(m.from, *view)) return count("stale_view_message");
  if (view->kind == ViewKind::status && (!view_.contains(m.from) || (view->flags & protocols::kViewJoining)))
    joiners_.insert(m.from);
  view_inbox_.emplace_back(m.from, *view);
  if (view_inbox_.size() > kMaxViewQueue) view_inbox_.pop_front(), count("view_queue_overflow");
  raise("peer " + std::to_string(m.from) + " began a view change");
}

void ControlPlane::on_state_request(const Message& m) {
  if (served_.empty()) return count("state_request_unanswered");
  protocols::Result<protocols::StateRequest> request = protocols::decode_state_request(m.bytes());
  if (!request) return count("state_request_" + std::string(protocols::to_string(request.error())));
  if (!within_budget(m.from, *request)) return count("state_request_throttled");
  const protocols::Error e = answer_state_request(transport_, m.from, *request, served_, served_shared_,
                                                  served_iteration_, options_.fault_in_served);
  if (e != protocols::Error::ok) count("state_request_" + std::string(protocols::to_string(e)));
}

// Per peer and kAnswerEvery, at most one state's worth of chunks and one list of chunk
// digests (which costs a pass over the state): requests cost the answerer, not the asker.
bool ControlPlane::within_budget(PeerId from, const protocols::StateRequest& request) {
  const auto now = Clock::now();
  Answered& a = answered_[from];
  if (now - a.since >= kAnswerEvery) a = Answered{now, 0, false};
  const std::uint64_t state = served_.size() + (request.shared ? served_shared_.size() : 0);
  const std::uint64_t chunk = protocols::chunk_layout(served_.size(), state - served_.size()).chunk_floats;
  const std::uint64_t floats = std::min<std::uint64_t>(state, std::uint64_t{request.count} * chunk);
  if ((request.digests && a.digests) || a.floats + floats > state) return false;
  a.floats += floats;
  a.digests = a.digests || request.digests;
  return true;
}

bool ControlPlane::on_state_hash(const Message& m) {
  protocols::Result<protocols::StateHash> hash = protocols::decode_state_hash(m.bytes());
  if (!hash) {
    count(std::string("state_hash_") + std::string(protocols::to_string(hash.error())));
    return true;
  }
  state_hashes_.record(m.from, hash->view, m.header.round, hash->digest);
  return !wake_on_state_hash_;
}

std::optional<std::pair<PeerId, ViewMessage>> ControlPlane::next_view_message() {
  while (!view_inbox_.empty()) {
    auto item = std::move(view_inbox_.front());
    view_inbox_.pop_front();
    if (relevant(item.first, item.second)) return item;
    count("stale_view_message");
  }
  return std::nullopt;
}

std::optional<std::uint64_t> ControlPlane::view_change_begun() const {
  std::optional<std::uint64_t> highest;
  for (const auto& [from, m] : view_inbox_) highest = std::max(highest.value_or(0), m.view);
  return highest;
}

void ControlPlane::set_view(const View& view) {
  // Judge the view on everything heard so far: the I/O thread may have heard a peer that
  // membership still holds for dead (a late starter past its start grace).
  membership_.poll(Clock::now());
  note_changes();
  view_ = view;
  view_since_ = Clock::now();
  event_.clear();
  const std::uint64_t current = view_tag(view_.number);
  std::vector<Message> now_current;
  std::deque<Message> later;
  for (Message& m : held_) {
    const std::uint64_t v = view_of_round(m.header.round);
    if (v == current) now_current.push_back(std::move(m));
    else if (v > current) later.push_back(std::move(m));
    else count("stale_view");
  }
  held_ = std::move(later);
  transport_.put_back(std::move(now_current));
  for (PeerId p : view_.members) joiners_.erase(p);
  // An agreed view's leader heard every member: a death notice of one this peer does not
  // watch was a false suspicion (a paused peer) or an earlier life of a peer that came back.
  // View 0 is the config's, agreed by no one.
  for (PeerId p : view_.members)
    if (view_.number > 0 && p != transport_.self() && !membership_.watches(p))
      membership_.revive(p, Clock::now(), "a member of view " + std::to_string(view_.number));
  note_changes();
  for (PeerId p : view_.members)
    if (p != transport_.self() && !membership_.alive(p) && !finished_.count(p))
      raise("member " + std::to_string(p) + " is not alive");
  if (!joiners().empty()) raise("peer " + std::to_string(joiners().front()) + " waits to join");
  for (const auto& [from, m] : view_inbox_)
    if (relevant(from, m)) raise("peer " + std::to_string(from) + " began a view change");
}

std::vector<PeerId> ControlPlane::join_contacts() const {
  std::vector<PeerId> out;
  for (PeerId p : membership_.watched())
    if (membership_.alive(p)) out.push_back(p);
  std::optional<PeerId> lowest;
  for (PeerId p : peers_)
    if (p != transport_.self() && membership_.alive(p) && (!lowest || p < *lowest)) lowest = p;
  if (lowest && std::find(out.begin(), out.end(), *lowest) == out.end()) out.push_back(*lowest);
  return out;
}

bool ControlPlane::responsive(PeerId peer) const {
  const auto heard = transport_.liveness();
  const auto it = heard.find(peer);
  if (it == heard.end()) return false;
  const auto window = std::max(2 * options_.membership.heartbeat_interval, std::chrono::milliseconds(200));
  return Clock::now() - it->second.last_heard <= window;
}

std::vector<PeerId> ControlPlane::joiners() const {
  std::vector<PeerId> live;
  for (PeerId p : joiners_)
    if (membership_.alive(p) && !view_.contains(p)) live.push_back(p);
  return live;
}

void ControlPlane::serve(protocols::Span<const float> model, std::uint64_t iteration,
                         protocols::Span<const float> shared) {
  served_ = model;
  served_shared_ = shared;
  served_iteration_ = iteration;
}

void ControlPlane::round_started(std::uint64_t round, std::optional<std::chrono::milliseconds> deadline) {
  round_start_ = std::make_pair(round, Clock::now());
  straggler_named_ = false;
  round_deadline_ = deadline;
  round_timed_out_ = false;
}

void ControlPlane::check_round_deadline() {
  if (!round_start_ || !round_deadline_ || round_timed_out_) return;
  const auto waited = Clock::now() - round_start_->second;
  if (waited < *round_deadline_) return;
  round_timed_out_ = true;
  raise("round " + std::to_string(round_start_->first) + " timed out (it passed its deadline of " +
        seconds_text(*round_deadline_) + ")");
}

// Once per slow round: the member furthest behind (by its heartbeats' round; the others
// behind it are most likely waiting for it too) or, when none is behind, the one silent the
// longest, if longer than two heartbeats.
void ControlPlane::name_stragglers() {
  if (!round_start_ || straggler_named_) return;
  const auto now = Clock::now();
  const auto waited = now - round_start_->second;
  if (waited < options_.straggler_after) return;
  straggler_named_ = true;
  const std::uint64_t round = round_start_->first;
  std::optional<std::pair<PeerId, PeerLiveness>> behind, silent;
  for (const auto& [peer, heard] : transport_.liveness()) {
    if (peer == transport_.self() || (options_.views && !view_.contains(peer))) continue;
    if (heard.heartbeat && heard.round < round && (!behind || heard.round < behind->second.round))
      behind = std::make_pair(peer, heard);
    if (!silent || heard.last_heard < silent->second.last_heard) silent = std::make_pair(peer, heard);
  }
  std::string who;
  if (behind)
    who = "peer " + std::to_string(behind->first) + " (at round " + std::to_string(behind->second.round) +
          ", last heard " + seconds_text(now - behind->second.last_heard) + " ago)";
  else if (silent && now - silent->second.last_heard > 2 * options_.membership.heartbeat_interval)
    who = "peer " + std::to_string(silent->first) + " (silent for " + seconds_text(now - silent->second.last_heard) + ")";
  if (!who.empty()) log("straggler: round " + std::to_string(round) + " has waited " + seconds_text(waited) + " for " + who);
}

}  // namespace starling::gossip
