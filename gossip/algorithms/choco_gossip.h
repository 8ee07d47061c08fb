#pragma once
// One synchronous CHOCO-Gossip round (Koloskova, Stich & Jaggi 2019) over a Transport:
// compressed gossip averaging that reaches consensus with any compressor Q, where naive
// compressed averaging drifts. Every peer keeps public copies x̂_j of itself and of each
// neighbour, identical on every peer that holds them (all start at zero). Per round:
//   1. q_i = Q(x_i − x̂_i), encoded per segment by a protocols codec (no error feedback:
//      x_i − x̂_i already is the part not yet sent, so the codec's residual is zeroed);
//   2. q_i goes to every neighbour as gossip_push frames (codec id, round, segment range);
//   3. x̂_i += q_i here, x̂_j += q_j for every neighbour's q_j of this round;
//   4. x_i ← x_i + γ Σ_j W_ij (x̂_j − x̂_i), W the plan's (Metropolis) weights.
// With a symmetric W the mean over peers is preserved exactly; with the lossless codec
// ("none") and γ = 1 a round is exactly a D-PSGD round.
//
// Not here: the local optimizer step (the caller's, between rounds), time-varying graphs
// (every holder of x̂_j must see every q_j, so the plan must be the same every round).
//
// Contract as GossipAverage: `peers` maps schedule ranks to peer ids and contains the
// transport's own id, the transport is connected to every neighbour and accepts them, all
// peers call run() in lockstep with equal lengths. Segments of a later round are buffered;
// stale, unexpected, out-of-range, duplicate and undecodable segments are dropped and
// counted, never applied. A dropped segment leaves its round incomplete, so run() ends in
// TimeoutError rather than mixing with an inconsistent copy.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gossip/topology/mixing_schedule.h"
#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::gossip {

struct ChocoOptions {
  /// Consensus step size γ in (0, 1]. The paper's bound is far too cautious in practice;
  /// 0.5 suits mild compressors (fp16, qsgd 8 bit), aggressive ones (topk 1%) want less.
  double gamma = 0.5;
  std::size_t segment_bytes = 1 << 20;       // uncompressed fp32 bytes per segment
  std::chrono::milliseconds timeout{60000};  // for one run()
  std::uint64_t first_round = 0;
  std::uint64_t max_rounds_ahead = 4;  // later rounds than this are dropped, not buffered
};

class ChocoGossip {
 public:
  /// InvalidArgument for an unknown codec or bad codec options, γ outside (0, 1], own id
  /// missing from peers, or an empty schedule.
  ChocoGossip(Transport& transport, std::vector<PeerId> peers, MixingSchedule schedule, const std::string& codec,
              const protocols::CodecOptions& codec_options = {}, ChocoOptions options = {});

  /// One CHOCO round on x. The first call fixes the length; InvalidArgument for another
  /// length later, a plan that differs from the first round's or is not symmetric, or a
  /// neighbour without a route.
  void run(protocols::Span<float> x);

  /// Sends with this density (top-k fraction, threshold target) from the next round on;
  /// the codec streams restart with the same seeds. InvalidArgument outside (0, 1].
  void set_density(double density);

  /// What a checkpoint keeps for the next run() to go on exactly: the public copies x̂ (this
  /// peer's and each neighbour's, by rank) and where the codec streams' random draws stand
  /// (state_counts.h). Empty before the first run().
  std::vector<float> state() const;
  /// Puts back a state() before the first run() on vectors of `length`, with the plan of
  /// this round; false, leaving the copies at zero, where it does not fit them.
  bool resume(const std::vector<float>& state, std::size_t length);

  std::uint64_t round() const { return round_; }
  /// Entries sent by the last round's encodes, summed over segments.
  std::size_t last_sent() const { return last_sent_; }
  const std::map<std::string, std::uint64_t>& drops() const { return drops_; }

 private:
  // Segments of the current round already applied, per in-neighbour.
  struct Arrivals {
    std::vector<bool> applied;
    std::size_t count = 0;
  };

  void prepare(const MixingPlan& plan, std::size_t length);
  void check_plan(const MixingPlan& plan) const;
  void encode_and_send(const MixingPlan& plan, protocols::Span<const float> x);
  void collect(Transport::Clock::time_point deadline);
  bool complete() const;
  void file(Message m);
  const char* reject_reason(const Message& m) const;
  void apply(const Message& m);
  void mix(const MixingPlan& plan, protocols::Span<float> x);
  std::size_t segment_begin(std::size_t s) const { return s * per_segment_; }
  std::size_t segment_size(std::size_t s) const;

  Transport& transport_;
  std::vector<PeerId> peers_;
  std::map<PeerId, int> rank_of_;
  int rank_ = 0;
  MixingSchedule schedule_;
  std::string codec_name_;
  protocols::CodecOptions codec_options_;
  protocols::CodecId codec_id_ = protocols::CodecId::none;
  ChocoOptions options_;
  std::size_t per_segment_ = 1;
  std::size_t length_ = 0;
  std::size_t segments_ = 0;
  bool prepared_ = false;
  std::vector<int> neighbours_;  // ranks, sorted; fixed by the first plan
  std::uint64_t round_ = 0;
  std::size_t last_sent_ = 0;
  std::vector<std::unique_ptr<protocols::Codec>> codecs_;  // one stream per segment
  void make_codecs();
  std::map<int, std::vector<float>> copies_;               // rank -> x̂ (self included)
  std::vector<float> diff_;
  std::vector<float> residual_;
  std::vector<std::uint8_t> payload_;
  std::map<int, Arrivals> arrivals_;                       // this round, per in-neighbour rank
  std::map<std::uint64_t, std::vector<Message>> pending_;  // later rounds, not yet applied
  std::map<std::string, std::uint64_t> drops_;
};

}  // namespace starling::gossip
