#pragma once
// Membership and failure detection for one peer, driven by the transport's owner thread
// (no thread of its own). The owner calls poll(now) while it waits and observe() on every
// message it receives; receive_data() does both around Transport::try_receive so that an
// algorithm waiting for data still answers and consumes heartbeats.
//
// Rules: heartbeats come from the transport's I/O thread when it has a heartbeat interval
// (then a peer busy computing still beats, and poll() takes the times the thread heard
// each peer from Transport::liveness()); otherwise poll() sends them, every
// heartbeat_interval, to each tracked peer this one has a route to (also to peers presumed
// dead, so a healed partition recovers; not to peers that left). Any message from a peer
// proves it alive. A peer is declared dead when nothing arrived from it for
// failure_timeout, or at once when it sends leave; one never heard from at all since it
// was tracked gets start_grace instead (peers start at different times). A message from
// an untracked or dead peer, or a heartbeat from a dead one that did not leave, makes it
// alive. Each transition is queued as a ViewChange with its reason, for the caller to log
// (take_changes()). A gap between two polls longer than half the failure timeout means this
// peer itself stood still (paused, or busy): the others' silence is then counted without
// it, so that a peer resumed after SIGSTOP does not declare everyone dead before its I/O
// thread has read what they sent meanwhile.
//
// Degree, not n: once the owner names the peers it watches (watch(), the
// monitoring overlay of watch_overlay.h), heartbeats go to those alone and only they can
// time out; every other tracked peer stays alive until a death notice says otherwise. A
// peer that learns a death (a watched peer timed out or said leave, or a notice told it)
// passes it on once, in a heartbeat to every peer it watches, so a death crosses the
// overlay in O(log n) hops and costs each peer O(degree) messages. A notice of a peer that
// finished says where it stopped (finished()), for the view agreement.
//
// Indirect probes (SWIM): a watched peer silent past its timeout is first only suspected,
// and this peer asks up to indirect_probes of the peer's other watchers (the overlay over
// the ring given to watch()) whether they heard from it within their failure timeout. A
// yes (vouch) clears the suspicion — the silence was this link's, not the peer's — and a
// peer nobody vouches for within probe_timeout is dead. The probes cost the death that
// much time, and spare the job a view change for one slow or broken link.
//
// Heartbeats say where their sender is: the header's round field carries its view (the
// number of the membership view it trains in, 0 before any change) and the payload's
// last_round the round it works on (Transport::announce()).
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/membership_messages.h"

namespace starling::gossip {

struct MembershipOptions {
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds failure_timeout{5000};
  /// How long a tracked peer that was never heard from may stay silent; 0: failure_timeout.
  std::chrono::milliseconds start_grace{0};
  /// Other watchers asked about a suspected peer (0: none, a timeout is a death at once),
  /// and how long their answers are waited for.
  int indirect_probes = 3;
  std::chrono::milliseconds probe_timeout{1000};
};

enum class PeerState : std::uint8_t { alive, dead };

const char* to_string(PeerState state);

/// One transition of one peer, with a human-readable cause.
struct ViewChange {
  PeerId peer = 0;
  PeerState state = PeerState::alive;
  std::string reason;
  /// A death that came by notice, or the peer's own finish: how it left, and where.
  std::optional<protocols::DeathNotice> notice;
};

struct PeerRecord {
  PeerState state = PeerState::alive;
  bool left = false;   // said leave: no heartbeats to it until it speaks again
  bool heard = false;  // anything arrived from it since it was tracked
  std::chrono::steady_clock::time_point last_seen;
  std::string endpoint;    // where it accepts connections, when known (for views)
  std::string public_key;  // its CURVE key (Z85), when known
  std::optional<protocols::DeathNotice> finished;  // where it finished, once it said so
  std::optional<std::chrono::steady_clock::time_point> suspected;  // since when, while probed
  /// When another watcher last vouched for it: its silence counts from then, but this peer
  /// vouches for it only on what it heard itself (last_seen), or a dead peer would live on
  /// in vouches passed back and forth.
  std::chrono::steady_clock::time_point vouched{};
};

class Membership {
 public:
  using Clock = std::chrono::steady_clock;

  /// InvalidArgument unless 0 < heartbeat_interval < failure_timeout.
  Membership(Transport& transport, MembershipOptions options);

  /// Tracks a peer as alive from `now` (no change event: the caller chose it).
  void track(PeerId peer, Clock::time_point now, std::string endpoint = {}, std::string public_key = {});
  void forget(PeerId peer);
  /// From now on heartbeats go to these peers only, and only they time out (see the file
  /// comment); a peer newly watched gets a fresh failure timeout from `now`.
  /// `ring` (this peer's job in ring order) tells whom to ask about a suspect; empty: no
  /// indirect probes.
  void watch(const std::vector<PeerId>& peers, Clock::time_point now, std::vector<PeerId> ring = {});
  /// The peers this one watches: those named by watch(), or every tracked peer before.
  std::vector<PeerId> watched() const;
  /// The job has started (or this peer joined it): from now on a watched peer never heard
  /// from by the start grace is passed on as dead, and those already taken for dead now are.
  /// Before, such a death stays this peer's own, undone when the peer is heard: peers started
  /// by hand minutes apart are late, not dead, and a notice would reach peers that never
  /// hear from them to undo it.
  void started();
  /// The peer said it finished at this round and iteration; its death notice will say so.
  void finished(PeerId peer, std::uint64_t round, std::uint64_t iteration);
  /// A peer held dead by notice that the caller knows to be alive (a member of an agreed view).
  void revive(PeerId peer, Clock::time_point now, const std::string& reason);
  bool watches(PeerId peer) const { return !watched_ || watched_->count(peer) != 0; }

  /// Sends the heartbeats that are due and declares timed-out peers dead.
  void poll(Clock::time_point now);
  /// Records that `message` arrived at `now`; true when it was a membership message
  /// (heartbeat or leave) and is used up, false when the caller should handle it.
  bool observe(const Message& message, Clock::time_point now);
  /// Tells every reachable tracked peer that this one leaves.
  void leave(protocols::LeaveReason reason);

  /// The transitions since the last call, oldest first.
  std::vector<ViewChange> take_changes();
  /// When poll() next has work: a heartbeat or the earliest possible timeout.
  Clock::time_point next_due() const;

  bool alive(PeerId peer) const;
  const std::map<PeerId, PeerRecord>& peers() const { return peers_; }
  Transport& transport() { return transport_; }
  /// Heartbeat or leave payloads that did not decode (the message still proved liveness).
  std::uint64_t malformed() const { return malformed_; }

 private:
  // Calls f(peer, record) for every tracked peer this one watches, in id order: O(watched)
  // of a job's thousand peers, not O(tracked), in every poll.
  template <typename Peers, typename F>
  static void for_each_watched(Peers& peers, const std::optional<std::set<PeerId>>& watched, F&& f) {
    if (!watched) {
      for (auto& [peer, r] : peers) f(peer, r);
      return;
    }
    for (PeerId p : *watched)
      if (const auto it = peers.find(p); it != peers.end()) f(p, it->second);
  }
  void send_heartbeats(Clock::time_point now);
  void send_notices();
  bool suspect(PeerId peer, PeerRecord& record, Clock::time_point now);
  void answer_probe(PeerId asker, PeerId about, Clock::time_point now);
  void send_notice_to(PeerId to, const protocols::DeathNotice& notice);
  void apply_notices(PeerId from, const protocols::Heartbeat& beat, Clock::time_point now);
  void refresh_from_transport();
  void discount_own_stall(Clock::time_point now);
  std::chrono::milliseconds allowed_silence(const PeerRecord& record) const;
  void change(PeerId peer, PeerRecord& record, PeerState state, std::string reason,
              std::optional<protocols::DeathNotice> notice = std::nullopt);
  void handle_leave(const Message& message, PeerRecord& record);

  Transport& transport_;
  MembershipOptions options_;
  std::map<PeerId, PeerRecord> peers_;
  std::vector<ViewChange> changes_;
  std::optional<std::set<PeerId>> watched_;         // none: every tracked peer
  std::vector<PeerId> ring_;                        // for the indirect probes; empty: none
  std::vector<protocols::DeathNotice> to_pass_on_;  // deaths learned since the last poll
  Clock::time_point next_heartbeat_{};
  Clock::time_point last_poll_{};
  std::uint64_t malformed_ = 0;
  bool left_ = false;     // this peer said leave
  bool starting_ = true;  // started() not yet called
};

/// The first message that is not a heartbeat or leave, feeding those to membership and
/// polling it while waiting. TimeoutError at the deadline, IoError once stopped.
Message receive_data(Transport& transport, Membership& membership, Membership::Clock::time_point deadline);

}  // namespace starling::gossip
