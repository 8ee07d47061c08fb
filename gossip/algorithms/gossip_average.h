#pragma once
// One synchronous D-PSGD mixing round over a Transport: send the own vector to this
// round's out-neighbours, wait for the in-neighbours' vectors of the same round, then
// x_i ← W_ii x_i + Σ_j W_ij x_j. Vectors travel as gossip_push segments tagged with the
// round (for a row-stochastic plan as x_i + Σ_j W_ij (x_j − x_i), which keeps the mean); a
// neighbour already in the next round is buffered, stale rounds are dropped and
// counted, as are segments that do not fit the vector or carry non-finite values. With a
// robust aggregator (robust_aggregation.h) the received vectors are clipped, trimmed or
// reduced to their median instead of averaged, and each neighbour's distance is kept.
//
// Contract: `peers` maps ranks of the schedule to peer ids and contains the transport's
// own id; the transport is connected to every rank the schedule sends to and accepts every
// rank it receives from before those start sending (TransportOptions::accept). All peers call
// run() in lockstep with equal lengths; run() throws TimeoutError past options.timeout.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gossip/algorithms/robust_aggregation.h"
#include "gossip/topology/mixing_schedule.h"
#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/span.h"

namespace starling::gossip {

struct GossipOptions {
  std::size_t segment_bytes = 1 << 20;
  std::chrono::milliseconds timeout{60000};  // for one run()
  std::uint64_t first_round = 0;
  std::uint64_t max_rounds_ahead = 4;  // later rounds than this are dropped, not buffered
  AggregatorSpec aggregator;           // for row-stochastic plans; push-sum's stay weighted
};


class GossipAverage {
 public:
  /// InvalidArgument when own id is missing from peers or a destination is not connected.
  GossipAverage(Transport& transport, std::vector<PeerId> peers, MixingSchedule schedule,
                GossipOptions options = {});

  /// One mixing round on x (same length on every peer).
  void run(protocols::Span<float> x);

  std::uint64_t round() const { return round_; }
  const std::map<std::string, std::uint64_t>& drops() const { return drops_; }
  const std::map<PeerId, NeighbourStats>& neighbour_stats() const { return neighbour_stats_; }

  // An attacking peer's round in three steps (byzantine_sync.h): the plan of the round, the
  // vectors of the given in-neighbour ranks (waits for them), a vector to one out-neighbour.
  MixingPlan plan() const { return schedule_(round_); }
  std::map<int, std::vector<float>> receive_from(const std::vector<int>& ranks, std::size_t length);
  void send_to(int rank, protocols::Span<const float> x);
  /// Ends the round begun by receive_from and send_to.
  void end_round();

 private:
  // Segments received from one in-neighbour for one round, indexed by segment number.
  struct Inflow {
    std::vector<Message> segments;
    std::size_t received = 0;
  };
  using RoundInflows = std::map<PeerId, Inflow>;

  void send_vector(const MixingPlan& plan, protocols::Span<const float> x);
  void send_segments(int rank, protocols::Span<const float> x);
  void collect(const std::vector<int>& ranks, std::size_t length, Transport::Clock::time_point deadline);
  bool complete(const std::vector<int>& ranks, std::uint64_t round) const;
  std::string waiting_for(const std::vector<int>& ranks) const;
  std::vector<float> assembled(int rank, std::size_t length) const;
  void file(Message m, std::size_t length);
  const char* reject_reason(const Message& m, std::size_t length) const;
  void mix(const MixingPlan& plan, protocols::Span<float> x);
  void mix_differences(const MixingPlan& plan, protocols::Span<float> x);
  void mix_weighted(const MixingPlan& plan, protocols::Span<float> x);
  void mix_robust(const MixingPlan& plan, protocols::Span<float> x);
  AggregatorSpec round_aggregator(const MixingPlan& plan, protocols::Span<const float> x) const;

  Transport& transport_;
  std::vector<PeerId> peers_;
  std::map<PeerId, int> rank_of_;
  int rank_ = 0;
  MixingSchedule schedule_;
  GossipOptions options_;
  std::size_t per_segment_ = 1;
  std::uint64_t round_ = 0;
  std::map<std::uint64_t, RoundInflows> inflows_;
  std::map<std::string, std::uint64_t> drops_;
  std::vector<float> own_;  // x before this round's mixing
  std::map<PeerId, NeighbourStats> neighbour_stats_;
  std::vector<float> after_last_mix_;  // x as the last robust round left it (the relative radius's reference)
};

}  // namespace starling::gossip
