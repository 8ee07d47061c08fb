#pragma once
// The synchronous exchange modes (allreduce, local-sgd, gossip, each plain or with a codec)
// made elastic: the peers of a view run one algorithm round per exchange(), and when the
// view must change (a member died, a peer joins, a round timed out) they agree on the next
// view (view_agreement.h) and go on without anyone waiting forever. A round is cut short by
// a deadline learned from the rounds before it (round_deadline.h), not by a fixed timeout.
//
// Per round: exchange() keeps the model it was given (the input) and runs the round over
// the view's members (all-reduce: the ring in config order; gossip: the configured topology
// over the members, Metropolis–Hastings weights recomputed). If the control plane aborts
// the round, the model goes back to the input and the peers agree. Then
//   - a peer at the decision's start round runs it again over the new members, from its
//     input: for all-reduce every member then still ends with identical bits (the mean of
//     the survivors' inputs);
//   - a peer behind it (the round it works on is complete on another peer) takes over the
//     source's model after that round (all-reduce: the common result; gossip keeps its own)
//     and returns; its next exchange() is the start round;
//   - a peer the decision moves (left out and rejoined, or more than one round behind) takes
//     the source's model and position, which exchange() returns for the node to continue from.
// The algorithm (sync_algorithm.h: the mode's and codec's, from one table) is built anew for
// each view, its rounds tagged with the view (view.h): CHOCO's public copies, the compressed
// all-reduce's base and residuals and gradient tracking's tracker start over. A round it
// cannot complete comes back as a value; only the hand-over of a model during a view change
// still catches the control plane's MembershipChanged itself.
//
// Start: every peer of the config is a member of view 0 and waits for the others
// (job_start.h: all of them while they keep arriving; once none came for start_timeout, a
// quorum of min_peers); one that never
// trained stays a member for as long as the job is in view 0, and takes part in a view
// change begun while it waited. A peer whose job is already running (a view was agreed
// without it), or started with join, asks every live peer to join (hello, with its model's
// shape), waits for a decision that includes it, and takes the source's model and position;
// the leader admits every joiner it knows of in one decision, and a view change that admits
// new members does not count towards the changes one round may take. In an open swarm
// (spec.swarm) the first peer admits newcomers before its first round until the view holds
// spec.swarm_start_peers members (or the start timeout passes), and a lone member looks for
// newcomers before each round, which it otherwise runs without receiving. Finish: it tells every peer the
// round it ended at (a finished status, then leave) and stays, serving its final model,
// until every other member has finished or died, so a member still in the last round can
// take that model over. Fewer members than min_peers: TooFewPeers, with the model as it was
// before the round.
//
// One state (the modes whose members end a round with the same model): after each round a
// member sends the others the digest of its model and its algorithm's shared state, and
// before its next round it judges them (gossip/control/state_hashes.h: the majority, a tie);
// one that differs from the majority takes the majority's state from its holders, each
// chunk checked against the majority's digest (gossip/control/model_transfer.h), keeping its
// own progress since the round (its model's change from its own round result), and goes on. A peer a view change admits takes the model from
// the members that vouch for the digest most of them vouch for, in chunks from all of them
// at once, each chunk checked (gossip/control/model_transfer.h); a seeder caught serving a
// wrong chunk is not asked again, and when every seeder is caught the join fails
// (WrongState) rather than train on a wrong model.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gossip/algorithms/adaptive_compression.h"
#include "gossip/algorithms/exchange_spec.h"
#include "gossip/algorithms/sync_algorithm.h"
#include "gossip/control/control_plane.h"
#include "gossip/control/job_start.h"
#include "gossip/control/round_deadline.h"
#include "gossip/control/state_hashes.h"
#include "gossip/control/view_agreement.h"
#include "gossip/transport/transport.h"
#include "protocols/span.h"

namespace starling::gossip {

class ElasticSync {
 public:
  using Clock = Transport::Clock;

  /// `model` must stay valid and keep its length. The view starts as every peer of spec.
  ElasticSync(Transport& transport, ControlPlane& control, const ExchangeSpec& spec, protocols::Span<float> model);

  /// Starts with the others, or joins the running job: then the position to continue from.
  std::optional<Position> start(std::uint64_t iteration);
  /// One round at `iteration` (the model's); a position when this peer was moved.
  std::optional<Position> exchange(std::uint64_t iteration, double compute_seconds);
  void finish();

  const View& view() const { return view_; }
  std::uint64_t view_changes() const { return view_changes_; }
  std::map<std::string, std::uint64_t> drops() const;
  /// Under a robust aggregator, per neighbour over every view so far (robust_aggregation.h).
  std::map<PeerId, NeighbourStats> neighbour_stats() const;

  /// What the checks of the members' state digests found so far.
  const StateCheck& state_check() const { return state_check_; }
  /// The algorithm's state beyond the model, for a checkpoint (empty values: none).
  AlgorithmState algorithm_state() const;
  /// A checkpoint's state, put back into the first algorithm built if that one is for the
  /// same members at the same round; otherwise the algorithm starts afresh.
  void resume(AlgorithmState state) { resumed_ = std::move(state); }

 private:
  enum class Outcome { rerun, done, moved };

  Outcome change_view(std::uint64_t iteration);
  Position join(Clock::time_point deadline);
  JobStart job_start() const;
  void adopt(const Decision& decision);
  void take_over(const Decision& decision, Clock::time_point deadline);
  void build(std::uint64_t start_round);
  void put_back_state(const std::vector<PeerId>& members, std::uint64_t start_round);
  std::optional<Position> complete_round(std::uint64_t iteration);
  void publish_digest();
  void check_state();
  void heal(std::uint64_t round, std::uint64_t majority, const std::map<PeerId, std::uint64_t>& reported);
  void warn(const std::string& line) const;
  void await_digests(Clock::time_point deadline, const std::function<bool()>& done);
  void vouch(const std::vector<PeerId>& before, const Decision& decision);
  void take_over_checked(const Decision& decision, Clock::time_point deadline);
  void restore();
  void listen_alone();
  std::optional<Position> await_swarm(std::uint64_t iteration);
  /// Whether `after` (ascending) has a member `before` (ascending) lacks.
  static bool admits(const std::vector<PeerId>& before, const std::vector<PeerId>& after);
  std::vector<PeerId> ring() const;
  std::size_t min_peers() const;
  void log(const std::string& line) const { control_.log(line); }

  Transport& transport_;
  ControlPlane& control_;
  ExchangeSpec spec_;
  protocols::Span<float> model_;
  ViewAgreement agreement_;
  View view_;
  std::uint64_t round_ = 0;             // the round this peer works on
  std::vector<float> input_;             // the model before that round
  std::vector<float> common_;            // the model after the last completed round
  std::uint64_t common_iteration_ = 0;
  std::optional<Position> moved_;
  std::uint64_t view_changes_ = 0;
  std::unique_ptr<SyncAlgorithm> algorithm_;  // for view_
  std::unique_ptr<AdaptiveCompression> adaptive_;  // the density controller, across views
  std::optional<AlgorithmState> resumed_;
  std::map<std::string, std::uint64_t> drops_;  // of algorithms already replaced
  std::map<PeerId, NeighbourStats> neighbour_stats_;  // of algorithms already replaced
  std::vector<float> shared_;  // the algorithm's shared state after the last completed round, as served
  std::optional<std::uint64_t> digest_round_;  // the round whose digests the next exchange() judges
  std::vector<PeerId> digest_members_;  // who publishes that round's digest; empty: every member
  StateCheck state_check_;
  std::set<PeerId> wrong_seeders_;  // handed over a state whose digest the members did not agree on
  RoundDeadline deadline_;  // when a round is cut short (round_deadline.h)
  ExchangeSpec algorithm_spec_;  // spec_ with no timeout of its own: deadline_ bounds the rounds
};

}  // namespace starling::gossip
