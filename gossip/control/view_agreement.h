#pragma once
// One view change of a synchronous job: the live peers agree on who trains on, from which
// round, and whose model the peers that are behind (or new) take over. Run by every peer
// that takes part, on its owner thread, inside an exchange (elastic_sync.h).
//
// The leader is the lowest id among the current view's members that this peer believes
// alive and not finished, itself included. The leader sends prepare to every such member
// it has no status from, waits for a status from each (one that dies meanwhile is no longer
// waited for), then decides
//   members      itself, every member that sent a status (not a finished one), and every
//                live peer that asks to join (a hello, or a status from outside the view);
//   start round  the highest round any member works on, or any finished peer reached:
//                every round below it is complete on some peer;
//   source       the lowest id holding the model after the round before it (a member at the
//                start round, else a finished peer at it), with that model's iteration;
//   number       one above every view number it has seen,
// and sends decide to every peer it hears, so that a live peer left out learns it. Every
// other peer sends its status to the peer it believes is the leader (again when that
// changes, every half second, and to anyone that sends it prepare) and waits for a decide
// with a higher number than its view, from whoever. Why it holds: all live members report
// to one leader, one peer decides, and a higher number always wins, so peers never train in
// one numbered view with different members; a member wrongly believed dead is left out, and
// the status it repeats reaches the leader from outside the new view: it is taken in again.
// Every wait has the caller's deadline (TimeoutError).
//
// What the peers then do with a decision (elastic_sync.h): members at the start round run
// it again, over the new members, from the model they had before it (kept for this); members
// behind it take over the source's model (all-reduce: the round's common result, so every
// member still holds identical bits) and go on from the start round.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "gossip/control/control_plane.h"
#include "gossip/control/view.h"
#include "gossip/transport/transport.h"
#include "protocols/view_messages.h"

namespace starling::gossip {

/// Where a peer stands when a view change begins.
struct Standing {
  std::uint64_t round = 0;      // the round it works on: every earlier one is complete here
  std::uint64_t iteration = 0;  // of its common model, the one after round - 1
};

struct Decision {
  View view;
  std::uint64_t start_round = 0;
  PeerId source = 0;
  std::uint64_t iteration = 0;  // of the source's model
};

/// The decision a decide message carries.
Decision decision_of(const protocols::ViewMessage& decide);

class ViewAgreement {
 public:
  ViewAgreement(Transport& transport, ControlPlane& control) : transport_(transport), control_(control) {}

  /// Runs one view change away from `current` (see the file comment). The decision may
  /// leave this peer out. TimeoutError at the deadline.
  Decision run(const View& current, const Standing& me, Transport::Clock::time_point deadline);

  /// Sends this peer's status to `to` (also used by peers that wait to join, or finished).
  void send_status(PeerId to, std::uint64_t view, const Standing& me, std::uint8_t flags);

 private:
  std::optional<PeerId> leader(const View& current) const;
  std::vector<PeerId> awaited(const View& current) const;
  Decision decide(const View& current, const Standing& me) const;
  void announce(const Decision& decision);
  void send(PeerId to, const protocols::ViewMessage& message);

  Transport& transport_;
  ControlPlane& control_;
  std::map<PeerId, protocols::ViewMessage> statuses_;  // this run's, the latest per peer
};

}  // namespace starling::gossip
