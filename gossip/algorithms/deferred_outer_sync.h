#pragma once
// Modes allreduce and local-sgd with exchange.slow_peers = "defer": the outer step
// (outer_optimizer_sync.h's, SlowMo / DiLoCo) goes on without a slow peer and takes its
// pseudo-gradient at a later round, so the fast members never wait for it.
//
// Every member holds the same x₀ and u. A member's pseudo-gradient Δ = x₀(b) − x (its
// model after training from x₀ of round b, plus what its codec left out before: error
// feedback) is for round a ≥ b: a fast member's is for b itself, a slow member's for the
// round it expects the others to have reached when it is done. It sends Δ, encoded, to
// every other member, with a plan (protocols/outer_plan_messages.h) naming the round of its
// next one. So at every round r every member knows whose pseudo-gradients r averages — those
// whose plan names r — and waits for exactly those; the others are still training. Round r
// then steps, on every member in the same order and so to the same bits:
//
//     w_i = 1, or 1 / (1 + (a_i − b_i)) with exchange.staleness_scaling
//     Δ̄  = Σ w_i Δ_i / Σ w_i            over the contributors of r (none: x₀ stays)
//     u ← β u + Δ̄,   x₀ ← x₀ − α (Δ̄ + β u)  (Nesterov)  or  x₀ ← x₀ − α u
//
// A member picks the round of its next pseudo-gradient from its own compute time (of its
// last two, the lesser while it is in step, the greater while it defers) against the
// others' for the latest of theirs it has heard of (each plan carries it): d = 1 while it
// is at most 2 times their median, else ⌈1.25 × its time / the pace⌉ rounds (at most
// kMaxDeferral), the pace being the slowest of their times within 2 times the median; its
// next is for round a + d. A slow member's run() sends Δ, then steps every round from b to
// a as the others' pseudo-gradients arrive (they were sent to it too) and returns the model
// x₀(a + 1), with span() giving the rounds it covered and the job's iteration: it goes on
// from where the job is, in step with the others. Only a round's contributors publish their
// state digest for it (span().published_by).
//
// The first round of the algorithm (the job's start, every new view) averages every
// member's model, sent to every other member in fp32 the same way, and all start from that
// x₀ together. A member that has finished tells the others (finish()) at the round its next
// pseudo-gradient was for, and they expect nothing more of it. The job ends there: no member
// steps that round or a later one (each learns of the end at that round, as it waits there
// for the finished member), so every member ends on the same model however late its last
// pseudo-gradient is. state() is x₀ then u; a resume restarts the codec's error feedback.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gossip/algorithms/sync_algorithm.h"
#include "protocols/codec.h"
#include "protocols/outer_plan_messages.h"

namespace starling::gossip {

/// The most rounds a member may defer its pseudo-gradient; later rounds' frames are dropped.
inline constexpr std::uint64_t kMaxDeferral = 32;

class DeferredOuterSync final : public SyncAlgorithm {
 public:
  /// InvalidArgument as OuterOptimizerSync, and for powersgd (a low-rank reduce needs every
  /// member in every round).
  explicit DeferredOuterSync(const SyncSetup& setup);
  std::map<std::string, std::uint64_t> drops() const override { return drops_; }
  std::vector<float> state() const override { return kept_.values(); }
  bool restore(const std::vector<float>& values) override;
  std::vector<protocols::Span<float>> shared_state() override;
  RoundSpan span() const override { return span_; }
  void finish(std::uint64_t iteration) override;

 private:
  // One member's pseudo-gradient for a round, as it arrives: the plan, then its segments.
  struct Contribution {
    std::optional<protocols::OuterPlan> plan;
    std::vector<Message> segments;  // by segment index; an empty payload: not yet here
    std::size_t received = 0;
    bool complete(std::size_t segments_needed) const;
  };
  struct Member {
    std::uint64_t base = 0, next = 0;  // the rounds of its next pseudo-gradient
    bool finished = false;
  };

  void round(double compute_seconds) override;
  void start_together();
  double period_compute(double compute_seconds);
  std::uint64_t step_through(std::uint64_t first, std::uint64_t own);
  void encode(const std::vector<float>& values, std::vector<std::unique_ptr<protocols::Codec>>& codecs,
              std::vector<float>& residual);
  void send(std::uint64_t round, const protocols::OuterPlan& plan);
  float sum(std::uint64_t round, const std::vector<PeerId>& from, std::map<PeerId, Contribution>& arrived);
  std::uint64_t rounds_to_defer(double compute_seconds) const;
  std::vector<PeerId> contributors(std::uint64_t round) const;
  void await(std::uint64_t round);
  void take(Message m);
  void take_plan(Message& m);
  void take_segment(Message& m);
  void step(std::uint64_t round);
  void drop(const std::string& reason) { ++drops_[reason]; }

  Transport& transport_;
  const ExchangeSpec& spec_;
  std::vector<PeerId> members_;  // ring order: the order every member sums in
  protocols::Span<float> model_;
  std::size_t per_segment_;
  std::size_t segment_count_;
  protocols::CodecId codec_id_;
  std::vector<std::unique_ptr<protocols::Codec>> codecs_;  // this member's streams, one per segment
  std::vector<std::unique_ptr<protocols::Codec>> exact_;   // fp32, for the first round's models
  std::unique_ptr<protocols::Codec> checker_;              // decodes pseudo-gradients
  std::uint64_t first_round_;                              // the (tagged) round that averages models
  std::uint64_t next_round_;                               // the (tagged) round to step next
  std::map<PeerId, Member> others_;
  Member own_;
  std::map<std::uint64_t, std::map<PeerId, Contribution>> arrived_;  // by round, then member
  std::map<PeerId, double> compute_;  // each other member's compute for its latest pseudo-gradient heard of
  double last_compute_ = 0.0;          // this member's, for its last pseudo-gradient
  std::optional<std::uint64_t> ended_;  // the first round a member that finished would have been in
  PairState kept_;
  std::vector<float>& start_ = kept_.first;      // x₀
  std::vector<float>& velocity_ = kept_.second;  // u
  std::vector<float> residual_, change_, mean_, unused_;  // unused_: the first round's residual, none
  std::vector<std::vector<std::uint8_t>> payloads_;  // this member's, per segment
  RoundSpan span_;
  std::map<std::string, std::uint64_t> drops_;
};

}  // namespace starling::gossip
