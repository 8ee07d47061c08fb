#pragma once
// A peer's side of model exchange: owns the transport (connections opened on demand to the
// peers it talks to, every peer of the job accepted, heartbeats from its link to the peers it
// watches, the message size and rate caps; over a ZeroMQ context of its own, or the one
// spec.context shares with the process's other peers) and the control plane, and mixes the
// peer's model with the others' once per exchange():
// `allreduce` and `local-sgd` replace it with the mean over all peers (ring all-reduce), or
// with a codec other than "none" with the common model plus the mean of the compressed
// changes (gossip/algorithms/compressed_allreduce.h), or with an outer learning rate ≠ 1 or an outer
// momentum with SlowMo/DiLoCo's outer step on that mean (gossip/algorithms/outer_optimizer_sync.h);
// `gossip` does one D-PSGD round with Metropolis–Hastings weights over the topology, or with
// a codec other than "none" one CHOCO-SGD round (compressed differences to public copies),
// with quasi_global_momentum > 0 a D-PSGD round with quasi-global momentum;
// `gradient-tracking` one DIGing round over the topology (gradient_tracking_sync.h);
// `clique-averaging` a round among the D-Cliques clique, then one over the whole graph
// (clique_averaging_sync.h);
// `async-gossip` averages with one random neighbour, no barrier, within a staleness bound.
// Peers may die, pause, join and rejoin while the job runs: the synchronous modes agree on
// membership views (elastic_sync.h), asynchronous gossip skips whom it cannot count on
// (elastic_async.h). Every wait has a deadline: nothing waits forever.
#include "gossip/algorithms/exchange_spec.h"
#include "gossip/control/control_plane.h"
#include "gossip/elastic_async.h"
#include "gossip/elastic_sync.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace starling::gossip {

/// Another peer of the job as this one sees it now (a live monitor's row): what crossed the
/// link, when it was last heard, and whether membership holds it alive.
struct PeerStatus {
  PeerId id = 0;
  std::string endpoint;
  PeerTraffic traffic;
  std::optional<double> silent_seconds;  // since anything arrived from it; none: never heard
  bool alive = true;       // not declared dead (membership.h)
  bool finished = false;   // said it finished: gone, but not dead
  bool suspected = false;  // alive, watched, but silent past two heartbeats
};

class PeerExchange {
 public:
  /// Binds this peer's endpoint (connections to the others open on demand); `model` must stay valid
  /// and keep its length for the exchanger's lifetime. Throws GossipError.
  PeerExchange(const ExchangeSpec& spec, protocols::Span<float> model);
  ~PeerExchange();

  /// Before training: starts with the others, or joins the job already running (or
  /// spec.join) and returns the position to continue from, the model already in place.
  std::optional<Position> start(uint64_t iteration);
  /// One mixing of the model with the peers (see the file comment); `iteration` is the
  /// model's, which async-gossip uses for its staleness bound, and `compute_seconds` the
  /// time spent computing since the last exchange, which adaptive compression weighs
  /// against the time this exchange takes. A position when this peer must continue from
  /// elsewhere (it was left out and joined again, or fell far behind). TooFewPeers when
  /// fewer than min_peers are left, the model then as it was before the call.
  std::optional<Position> exchange(uint64_t iteration, double compute_seconds = 0.0);
  /// Says goodbye and stays until the others no longer need this peer (async-gossip: until
  /// they have finished too; the synchronous modes: until every member has done its last
  /// round), so nobody waits on a peer that is gone.
  void finish();

  /// async-gossip: the mean step gap to the slowest neighbour over the exchanges so far.
  std::optional<double> mean_staleness() const;

  uint64_t bytes_sent() const;
  uint64_t bytes_received() const;
  /// Control messages (hello, heartbeat, leave, view) sent and accepted by this transport.
  uint64_t control_messages_sent() const;
  uint64_t control_messages_received() const;
  /// Every message dropped so far, by reason: the transport's, the control plane's and the
  /// algorithms'.
  std::map<std::string, std::uint64_t> drops() const;
  /// Per neighbour under a robust aggregator: its distance and how often it was clipped.
  std::map<PeerId, NeighbourStats> neighbour_stats() const;
  std::uint64_t view_changes() const { return sync_ ? sync_->view_changes() : 0; }
  /// The synchronous algorithm's state beyond the model, for a checkpoint; empty values for
  /// an algorithm without one and for async-gossip.
  AlgorithmState algorithm_state() const { return sync_ ? sync_->algorithm_state() : AlgorithmState{}; }
  /// Before start(): a checkpoint's algorithm state (ElasticSync::resume).
  void resume(AlgorithmState state) {
    if (sync_) sync_->resume(std::move(state));
  }
  /// What the checks of the members' state digests found (the modes with a common model;
  /// gossip/control/state_hashes.h); all zero otherwise.
  StateCheck state_check() const { return sync_ ? sync_->state_check() : StateCheck{}; }
  /// The last view's members (the synchronous modes); empty for async-gossip.
  std::vector<PeerId> members() const;
  /// Every other peer of the job, in ring order. Not while a mix runs on another thread.
  std::vector<PeerStatus> peer_status() const;
  const ExchangeSpec& spec() const { return spec_; }

 private:
  void report_drops();

  ExchangeSpec spec_;
  protocols::Span<float> model_;
  std::shared_ptr<TransportContext> context_;  // outlives the transport
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<ControlPlane> control_;
  std::unique_ptr<ElasticSync> sync_;
  std::unique_ptr<ElasticAsync> async_;
  std::chrono::steady_clock::time_point last_report_;
  std::map<std::string, std::uint64_t> reported_;  // drops at the last report
};

}  // namespace starling::gossip
