#pragma once
// The control plane of one peer: what happens to messages before an exchange algorithm sees
// them. It is the transport's ReceiveHook, so it runs inside every receive, whichever
// algorithm waits. It owns the peer's Membership (failure detection on the transport's
// heartbeats) and
//  - logs every change of a peer's state, with its reason;
//  - queues view messages (status, prepare, decide) for the view agreement, dropping those
//    of views already left behind ("stale_view_message");
//  - in an open swarm (options.swarm; join.h), answers newcomers' bootstrap requests (a
//    refusal naming the cause, a redirect to the leader, or, from the leader, an id and the
//    live peers) and admits a stranger's join request only with a valid invitation: then it
//    connects back, tracks the stranger and counts it among its peers;
//  - records join requests (hello; a model of another shape is refused with a join reply;
//    a hello from a member whose heartbeats already name the current view is one sent
//    before its admission and asks for nothing: "hello_after_admission") and peers that
//    finished (the finished status they send before leave);
//  - answers state requests (state_request; model_transfer.h) out of the model it was told
//    to serve (and the shared state, when asked for it): per peer and 200 ms, at most one
//    state's worth of chunks and one list of chunk digests ("state_request_throttled"
//    beyond; a malformed request is counted as state_request_<error>);
//  - records the members' state digests (state_hash; state_hashes.h), and drops answers to
//    state requests that arrive while this peer takes no state ("stale_state_answer");
//  - with views (the synchronous modes): passes data frames of the current view on, holds
//    those of a newer view until set_view() reaches it, and drops older ones ("stale_view");
//  - raises an event when the view must change: a member died, a peer asks to join, a view
//    message needs an answer, or a live peer is heard in a newer view. While armed (an
//    algorithm is running) an event throws MembershipChanged out of the receive;
//  - names the peer a round waits for once it has waited longer than straggler_after.
// It watches only the peers the options name (O(degree + log n) of them): the others'
// deaths reach it as notices passed on by their watchers, and a notice that a member
// finished counts as its finished status.
// Without views (asynchronous gossip) deaths are only recorded (alive() and responsive()
// answer the algorithm), and its own heartbeats and leaves pass through to it.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gossip/control/join.h"
#include "gossip/control/membership.h"
#include "gossip/control/state_hashes.h"
#include "gossip/control/view.h"
#include "gossip/transport/transport.h"
#include "protocols/membership_messages.h"
#include "protocols/state_transfer.h"
#include "protocols/view_messages.h"

namespace starling::gossip {

/// Bound on the view messages queued for the agreement.
inline constexpr std::size_t kMaxViewQueue = 4096;

struct ControlOptions {
  MembershipOptions membership;
  bool views = true;  // synchronous modes
  protocols::Hello shape;  // this peer's model, checked against joiners'
  /// The peers this one watches (heartbeats, failure detection; watch_overlay.h); empty:
  /// every peer. The rest it learns of by death notices (membership.h).
  std::vector<PeerId> watch;
  std::chrono::milliseconds straggler_after{1000};
  /// An open swarm: what a newcomer must show (join.h); none: only the config's peers.
  std::optional<SwarmAdmission> swarm;
  /// Where the config's peers accept connections, handed on to newcomers.
  std::map<PeerId, std::string> endpoints;
  std::function<void(const std::string&)> log;  // view changes, deaths, stragglers
  std::function<void(std::vector<float>&)> fault_in_served;  // tests only: ExchangeSpec's, on each chunk served
};

class ControlPlane final : public ReceiveHook {
 public:
  using Clock = Transport::Clock;

  /// Tracks every peer of `peers` but this one and installs itself as the transport's hook.
  ControlPlane(Transport& transport, const std::vector<PeerId>& peers, ControlOptions options);
  /// Uninstalls the hook.
  ~ControlPlane() override;
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  bool intercept(Message& message) override;
  void idle() override;

  /// The view this peer trains in. Clears the event, puts back frames held for this view,
  /// drops older ones, then raises again what the view does not settle (a dead member, a
  /// joiner left out, view messages still to answer).
  void set_view(const View& view);
  const View& view() const { return view_; }
  /// While armed, events throw MembershipChanged out of the receive.
  void arm(bool armed) { armed_ = armed; }
  bool event_pending() const { return !event_.empty(); }
  /// The first reason raised since the last take; clears the event.
  std::string take_event();
  void raise(const std::string& why);
  std::optional<std::pair<PeerId, protocols::ViewMessage>> next_view_message();
  /// The highest view named by the view messages waiting to be taken (a view change that
  /// concerns this peer has begun), or nullopt when none waits.
  std::optional<std::uint64_t> view_change_begun() const;

  bool alive(PeerId peer) const { return membership_.alive(peer); }
  /// The job runs with this peer in it (Membership::started).
  void started() { membership_.started(); }
  /// Tells every peer this one leaves (a clean finish).
  void leave() { membership_.leave(protocols::LeaveReason::shutdown); }
  /// Heard from within two heartbeat intervals: not paused, not cut off.
  bool responsive(PeerId peer) const;
  /// Live peers that asked to join and are not members of the view.
  std::vector<PeerId> joiners() const;
  /// A join request was refused by a peer with another model shape.
  bool refused() const { return refused_; }
  /// Peers that finished, with the status they sent then.
  const std::map<PeerId, protocols::ViewMessage>& finished() const { return finished_; }
  std::map<PeerId, PeerLiveness> liveness() const { return transport_.liveness(); }
  const std::vector<PeerId>& peers() const { return peers_; }
  /// The peers this one watches (every other peer when the options named none).
  std::vector<PeerId> watched() const { return membership_.watched(); }
  /// Whom a join request goes to: the live peers it watches, and the live peer of the
  /// lowest id, which leads view changes (view_agreement.h) and may watch others.
  std::vector<PeerId> join_contacts() const;

  /// What state requests are answered with (empty: none), and the shared state beyond the
  /// model that requests may ask for (model_transfer.h); the spans must stay valid.
  void serve(protocols::Span<const float> model, std::uint64_t iteration, protocols::Span<const float> shared = {});
  /// The members' state digests heard so far (this peer records its own).
  StateHashes& state_hashes() { return state_hashes_; }
  /// While on, a state_hash message, recorded as always, also ends the receive that got it
  /// (it comes back from try_receive), so that a wait for digests wakes as each arrives.
  void wake_on_state_hash(bool on) { wake_on_state_hash_ = on; }
  /// While on, answers to state requests (state_manifest, state_transfer) pass to the
  /// receive; while off, one that arrives (late, after its fetch ended) is dropped and
  /// counted as stale_state_answer.
  void taking_state(bool on) { taking_state_ = on; }

  /// A round of the exchange begins or ends (for naming stragglers). A round still running
  /// after `deadline` raises an event ("round R timed out"), which aborts it while armed.
  void round_started(std::uint64_t round, std::optional<std::chrono::milliseconds> deadline = std::nullopt);
  void round_ended() { round_start_.reset(); }
  /// Whether the round now running passed its deadline (and raised its event).
  bool round_timed_out() const { return round_timed_out_; }

  void count(const std::string& reason) { ++drops_[reason]; }
  const std::map<std::string, std::uint64_t>& drops() const { return drops_; }
  void log(const std::string& line) const;

 private:
  void on_hello(const Message& m);
  void on_bootstrap(const Message& m);
  std::optional<protocols::Hello> admit_stranger(const Message& m);
  PeerId next_id();
  bool admitted(PeerId peer) const;
  void on_view(const Message& m);
  void on_state_request(const Message& m);
  bool within_budget(PeerId from, const protocols::StateRequest& request);
  bool on_state_hash(const Message& m);
  bool relevant(PeerId from, const protocols::ViewMessage& m) const;
  bool filter_by_view(Message& m);
  void note_changes();
  void check_heartbeat_views();
  void name_stragglers();
  void check_round_deadline();
  void note_relay();

  Transport& transport_;
  std::vector<PeerId> peers_;
  ControlOptions options_;
  Membership membership_;
  View view_;
  Clock::time_point view_since_{};  // when set_view() took it up
  bool armed_ = false;
  std::string event_;
  std::deque<std::pair<PeerId, protocols::ViewMessage>> view_inbox_;
  std::deque<Message> held_;  // data of a newer view
  std::set<PeerId> joiners_;
  bool refused_ = false;
  std::map<PeerId, protocols::ViewMessage> finished_;
  std::map<PeerId, std::uint64_t> newer_view_seen_;  // the newest view raised per peer
  struct Answered {  // what a peer's state requests cost since `since`
    Clock::time_point since{};
    std::uint64_t floats = 0;
    bool digests = false;
  };
  std::map<PeerId, Answered> answered_;
  protocols::Span<const float> served_;
  protocols::Span<const float> served_shared_;
  std::uint64_t served_iteration_ = 0;
  std::optional<std::pair<std::uint64_t, Clock::time_point>> round_start_;  // round, when
  std::optional<PeerId> relay_;  // as last logged (note_relay)
  bool straggler_named_ = false;
  std::optional<std::chrono::milliseconds> round_deadline_;  // of the round now running
  bool round_timed_out_ = false;
  std::map<std::string, std::uint64_t> drops_;
  StateHashes state_hashes_;
  bool wake_on_state_hash_ = false;
  bool taking_state_ = false;
  PeerId next_id_ = 0;  // the lowest id this peer may hand out next
  /// Routes opened to answer newcomers' bootstrap requests, closed once their answer has had
  /// time to go out.
  std::deque<std::pair<Clock::time_point, PeerId>> handshake_routes_;
  void close_handshake_routes();
  bool behind_nat(PeerId peer) const;  // it advertised kBehindNat: a newcomer cannot dial it
  std::set<PeerId> refused_strangers_;  // logged once each
};

}  // namespace starling::gossip
