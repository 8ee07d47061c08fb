// The leader protocol of a view change (gossip/control/view_agreement.h).
#include "gossip/control/view_agreement.h"

#include <algorithm>
#include <set>
#include <string>

#include "gossip/transport/error.h"

namespace starling::gossip {

namespace {

using protocols::ViewKind;
using protocols::ViewMessage;
using Clock = Transport::Clock;

bool is_finished(const ViewMessage& m) { return (m.flags & protocols::kViewFinished) != 0; }
bool is_joining(const ViewMessage& m) { return (m.flags & protocols::kViewJoining) != 0; }

// How often a peer waiting for a decision repeats its status to the leader.
constexpr std::chrono::milliseconds kStatusAgain{500};

}  // namespace

Decision decision_of(const ViewMessage& m) {
  Decision d;
  d.view.number = m.view;
  d.view.members.assign(m.peers.begin(), m.peers.end());
  d.start_round = m.round;
  d.source = m.source;
  d.iteration = m.iteration;
  return d;
}

void ViewAgreement::send(PeerId to, const ViewMessage& message) {
  std::vector<std::uint8_t> payload;
  if (protocols::encode_view(message, payload) != protocols::Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "a view message breaks its format");
  protocols::FrameHeader h;
  h.type = protocols::MessageType::view;
  transport_.send(to, h, protocols::ByteSpan(payload.data(), payload.size()));
}

void ViewAgreement::send_status(PeerId to, std::uint64_t view, const Standing& me, std::uint8_t flags) {
  ViewMessage status;
  status.kind = ViewKind::status;
  status.flags = flags;
  status.view = view;
  status.round = me.round;
  status.iteration = me.iteration;
  for (PeerId p : control_.peers())
    if (p == transport_.self() || control_.alive(p)) status.peers.push_back(p);
  std::sort(status.peers.begin(), status.peers.end());
  send(to, status);
}

std::optional<PeerId> ViewAgreement::leader(const View& current) const {
  for (PeerId p : current.members)  // ascending
    if (p == transport_.self() || (control_.alive(p) && !control_.finished().count(p))) return p;
  return std::nullopt;
}

// The members the leader needs a status from: live, unfinished, not itself.
std::vector<PeerId> ViewAgreement::awaited(const View& current) const {
  std::vector<PeerId> out;
  for (PeerId p : current.members)
    if (p != transport_.self() && control_.alive(p) && !control_.finished().count(p) && !statuses_.count(p))
      out.push_back(p);
  return out;
}

Decision ViewAgreement::run(const View& current, const Standing& me, Clock::time_point deadline) {
  statuses_.clear();
  std::set<PeerId> prepared;
  std::optional<PeerId> told;
  Clock::time_point tell_again{};
  for (;;) {
    // 1. The view messages that came in: a decision ends the run, statuses are collected,
    //    prepare is answered by whoever sent it.
    while (auto item = control_.next_view_message()) {
      const auto& [from, m] = *item;
      if (m.kind == ViewKind::decide) return decision_of(m);
      if (m.kind == ViewKind::status) statuses_[from] = m;
      if (m.kind == ViewKind::prepare) send_status(from, current.number, me, 0);
    }
    // 2. Lead, or report to the leader.
    const std::optional<PeerId> lead = leader(current);
    if (lead == transport_.self()) {
      const std::vector<PeerId> waiting = awaited(current);
      for (PeerId p : waiting) {
        if (!prepared.insert(p).second) continue;
        ViewMessage prepare;
        prepare.kind = ViewKind::prepare;
        prepare.view = current.number;
        send(p, prepare);
      }
      if (waiting.empty()) {
        const Decision d = decide(current, me);
        announce(d);
        return d;
      }
    } else if (lead && (told != lead || Clock::now() >= tell_again)) {
      // Again and again: a leader that took this peer for dead decides without it and tells
      // it nothing, and only a status it gets afterwards, from outside its view, lets it in.
      send_status(*lead, current.number, me, 0);
      told = lead;
      tell_again = Clock::now() + kStatusAgain;
    }
    // 3. Wait a little; data of the view being replaced is of no use any more.
    const auto now = Clock::now();
    if (now >= deadline)
      STARLING_GOSSIP_THROW(TimeoutError, "view change away from view " + std::to_string(current.number) +
                                              ": no decision before the deadline");
    if (transport_.try_receive(std::min(deadline, now + std::chrono::milliseconds(20))))
      control_.count("aborted_round");
  }
}

Decision ViewAgreement::decide(const View& current, const Standing& me) const {
  const PeerId self = transport_.self();
  std::set<PeerId> members{self};
  std::map<PeerId, ViewMessage> standing;  // members' positions: the leader's, statuses, finished peers
  standing[self] = ViewMessage{ViewKind::status, 0, current.number, me.round, me.iteration, 0, {}};
  std::uint64_t highest = current.number;
  for (const auto& [p, m] : statuses_) {
    highest = std::max(highest, m.view);
    if (!control_.alive(p) || is_finished(m)) continue;
    members.insert(p);
    if (current.contains(p) && !is_joining(m)) standing[p] = m;
  }
  for (PeerId j : control_.joiners()) members.insert(j);
  for (const auto& [p, m] : control_.finished())
    if (current.contains(p) && !standing.count(p)) standing[p] = m;
  Decision d;
  for (const auto& [p, m] : standing) d.start_round = std::max(d.start_round, m.round);
  // The source: the lowest live member at the start round, else the lowest finished peer there.
  std::optional<PeerId> live, done;
  for (const auto& [p, m] : standing) {  // ascending ids
    if (m.round != d.start_round) continue;
    std::optional<PeerId>& slot = is_finished(m) || control_.finished().count(p) ? done : live;
    if (!slot) slot = p;
  }
  d.source = live ? *live : *done;
  d.iteration = standing.at(d.source).iteration;
  d.view.number = highest + 1;
  d.view.members.assign(members.begin(), members.end());
  return d;
}

void ViewAgreement::announce(const Decision& d) {
  ViewMessage decide;
  decide.kind = ViewKind::decide;
  decide.view = d.view.number;
  decide.round = d.start_round;
  decide.iteration = d.iteration;
  decide.source = d.source;
  decide.peers.assign(d.view.members.begin(), d.view.members.end());
  for (PeerId p : control_.peers())
    if (p != transport_.self() && (d.view.contains(p) || control_.alive(p))) send(p, decide);
}

}  // namespace starling::gossip
