#pragma once
// Asynchronous gossip (async_gossip.h) made fault tolerant. There are no views: each peer
// only needs to know which neighbours it can count on.
//  - A neighbour counts while the control plane says it is alive and was heard from within
//    two heartbeats (ControlPlane::responsive): a dead or paused one is skipped by the
//    staleness bound and the partner choice, and an exchange waiting on it is given up.
//  - A peer that starts into a running job (job_start.h), or with join, asks the others to
//    take it (hello: a model of another shape is refused) and takes the model and position
//    of the first live neighbour that hands its model over (model_transfer.h).
//  - A peer that finds itself far behind every neighbour it can count on (more than twice
//    max_staleness + 1 steps: it was paused, or restarted from an old checkpoint) takes the
//    model and position of the nearest of them, rather than hold them all back while it
//    catches up.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gossip/algorithms/async_gossip.h"
#include "gossip/algorithms/exchange_spec.h"
#include "gossip/control/control_plane.h"
#include "gossip/transport/transport.h"
#include "protocols/span.h"

namespace starling::gossip {

class ElasticAsync {
 public:
  using Clock = Transport::Clock;

  /// `model` must stay valid and keep its length; `neighbours` are this peer's in the topology.
  ElasticAsync(Transport& transport, ControlPlane& control, const ExchangeSpec& spec, protocols::Span<float> model,
               std::vector<PeerId> neighbours);

  /// Starts with the others, or joins the running job: then the position to continue from.
  std::optional<Position> start(std::uint64_t iteration);
  /// One pairwise exchange at `iteration`; a position when this peer took over another's.
  std::optional<Position> exchange(std::uint64_t iteration);
  void finish();

  std::map<std::string, std::uint64_t> drops() const { return async_.drops(); }
  const AsyncGossipStats& stats() const { return async_.stats(); }

 private:
  bool counts(PeerId peer) const;
  std::optional<PeerId> far_ahead(std::uint64_t iteration) const;
  std::optional<Position> take_over(const std::vector<PeerId>& sources, Clock::time_point deadline);
  void ask_to_join();

  Transport& transport_;
  ControlPlane& control_;
  ExchangeSpec spec_;
  protocols::Span<float> model_;
  std::vector<PeerId> neighbours_;
  AsyncGossip async_;
};

}  // namespace starling::gossip
