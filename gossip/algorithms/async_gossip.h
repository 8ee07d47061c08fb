#pragma once
// Asynchronous pairwise gossip (AD-PSGD, Lian et al. 2018; SwarmSGD) with a staleness
// bound (SSP, Ho et al. 2013) and optional staleness-aware scaling (Zhang et al. 2016).
// No global barrier: a peer that calls run() averages with ONE random live neighbour,
// and answers other peers' requests whenever it is inside run(), serve() or finish().
// Every peer talks only from its own thread, through its own Transport.
//
// Protocol (all frames raw fp32 segments, codec none, as GossipAverage's):
//   heartbeat(round = step)   "I am at step `step`". Sent to every live neighbour when run()
//                             starts a new step, and to the partner before every reply,
//                             so the step travels ahead of the vector on the same ordered
//                             connection.
//   gossip_push(round = seq)  exchange request: the initiator's x_i in segments; seq is
//                             the initiator's exchange number (strictly increasing).
//   gossip_pull_reply(round = seq)
//                             the responder's x_j as it was before mixing, in segments;
//                             one frame with tensor_length 0 and no payload = declined.
//   leave(round = step)       this peer has finished: no longer a partner, no longer
//                             counted for the staleness bound (payload: the leave reason,
//                             protocols/membership_messages.h).
//
// One exchange between initiator i and responder j, with τ = max(1, |step_i − step_j|)
// when scaling is on and τ = 1 otherwise:
//   i: snapshot a = x_i, send heartbeat + request(a), then wait, serving others meanwhile;
//   j: on the complete request, reply b = x_j, then x_j += (a − b) / (2τ) at once;
//   i: on the reply, x_i += (b − a) / (2τ).
// Without interleaving both end at (a + b)/2. i applies a delta rather than assigning, so
// requests i served while waiting are kept, and Σ x over all peers is preserved exactly
// (up to rounding) in every case. Crossing requests (i and j asking each other at once)
// would swap the vectors instead of averaging them: the lower peer id declines the higher
// one's request, so exactly one of the two exchanges happens.
//
// Staleness bound s: run(x, step) exchanges only while step − min(last known step of the
// live neighbours) ≤ s; otherwise it serves requests until heartbeats show the slowest
// neighbour caught up (TimeoutError at the deadline). The peer with the lowest step never
// waits, so the system always progresses. finish() announces leave and keeps serving until
// every neighbour has left too, so no request goes unanswered.
//
// Faults (options.reachable): a neighbour counts as live only while it has not left and
// `reachable` says so (the control plane's verdict: alive and heard from lately). One that
// stops being reachable is neither waited for by the bound, nor picked, nor waited for by
// finish(), and an exchange waiting on it is abandoned ("abandoned_exchange"; the sum over
// peers is then off by that half-exchange). So a paused peer holds the others back for
// about two heartbeats, not for its pause.
//
// Malformed, unexpected or out-of-range frames are dropped and counted, never mixed in.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/span.h"

namespace starling::gossip {

struct AsyncGossipOptions {
  std::uint64_t max_staleness = 4;  // s of SSP
  bool staleness_scaling = false;   // divide mixed-in deltas by τ = max(1, step gap)
  std::size_t segment_bytes = 1 << 20;
  std::chrono::milliseconds timeout{60000};  // for one run() or finish()
  std::uint64_t seed = 1;                    // partner choice (mixed with the own id)
  std::uint64_t first_step = 0;              // neighbours' step until they announce one
  /// Whether a neighbour may be waited for and picked (see the file comment); empty: always.
  std::function<bool(PeerId)> reachable;
  std::chrono::milliseconds poll{20};  // how often waits look at `reachable` again
};

struct AsyncGossipStats {
  std::uint64_t exchanges = 0;  // own requests answered with a vector and mixed in
  std::uint64_t served = 0;     // others' requests answered and mixed in
  std::uint64_t declined = 0;   // crossing requests this peer declined
  std::uint64_t refused = 0;    // own requests a partner declined
  std::uint64_t waits = 0;      // run() calls held back by the staleness bound
  std::uint64_t max_gap = 0;    // largest step gap run() ever exchanged at
  std::uint64_t gap_sum = 0, runs = 0;  // for the mean gap (staleness) over run() calls
};

class AsyncGossip {
 public:
  /// InvalidArgument when a neighbour is the own id, repeated, or not connected.
  AsyncGossip(Transport& transport, std::vector<PeerId> neighbours, AsyncGossipOptions options = {});

  /// Announces `step` (non-decreasing), waits for the staleness bound, then averages x with
  /// one random live neighbour. Returns the step gap it exchanged at (≤ max_staleness);
  /// with no live neighbour left it returns 0 without exchanging. The first call on any
  /// entry point fixes the length of x; InvalidArgument for another length, a decreasing
  /// step, or a call after finish().
  std::uint64_t run(protocols::Span<float> x, std::uint64_t step);

  /// Handles everything already received (answers requests) without waiting; returns the
  /// number of requests answered.
  std::size_t serve(protocols::Span<float> x);

  /// Announces leave, then serves until every neighbour has left as well.
  void finish(protocols::Span<float> x);

  const AsyncGossipStats& stats() const { return stats_; }
  const std::map<std::string, std::uint64_t>& drops() const { return drops_; }

 private:
  struct Neighbour {
    std::uint64_t step = 0;
    bool left = false;
    // An incoming request being assembled.
    std::uint64_t request_seq = 0;
    std::vector<Message> request;
    std::size_t request_received = 0;
  };
  // This peer's own exchange in flight.
  struct Outgoing {
    PeerId partner = 0;
    std::uint64_t seq = 0;
    std::vector<float> snapshot;
    std::vector<Message> reply;
    std::size_t received = 0;
    bool done = false;
  };

  void fix_length(std::size_t length);
  bool live(PeerId id, const Neighbour& n) const;
  void handle_until(Transport::Clock::time_point deadline, protocols::Span<float> x);
  void announce(protocols::MessageType type, PeerId to);
  void wait_for_staleness(protocols::Span<float> x, Transport::Clock::time_point deadline);
  std::optional<std::uint64_t> slowest_live() const;
  std::optional<PeerId> pick_partner();
  void exchange(protocols::Span<float> x, PeerId partner, Transport::Clock::time_point deadline);
  std::size_t handle(Message m, protocols::Span<float> x);
  std::size_t on_request(Message m, protocols::Span<float> x);
  void on_reply(Message m, protocols::Span<float> x);
  std::size_t respond(PeerId from, protocols::Span<float> x);
  const char* segment_problem(const Message& m) const;
  void send_vector(PeerId to, protocols::MessageType type, std::uint64_t seq, protocols::Span<const float> x);
  void mix_in(protocols::Span<float> x, const std::vector<Message>& segments, protocols::Span<const float> base,
              std::uint64_t other_step);

  Transport& transport_;
  std::map<PeerId, Neighbour> neighbours_;
  AsyncGossipOptions options_;
  std::size_t per_segment_ = 1;
  std::optional<std::size_t> length_;
  std::uint64_t step_ = 0;
  std::optional<std::uint64_t> announced_;
  bool finished_ = false;
  std::uint64_t seq_ = 0;
  std::optional<Outgoing> outgoing_;
  std::mt19937_64 rng_;
  AsyncGossipStats stats_;
  std::map<std::string, std::uint64_t> drops_;
};

}  // namespace starling::gossip
