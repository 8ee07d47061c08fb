#pragma once
// One synchronous exchange algorithm set up for one membership view, in Gloo's shape: the
// constructor takes the view (its members, this peer's place among them), the spec, the
// transport and the model, and lays everything out; run() is one round on the model. The
// elastic layer (elastic_sync.h) builds a new one for every view through
// make_sync_algorithm(), whose table (algorithm_table.cpp) maps the exchange mode and its
// variant (a codec, with its density steered or not, quasi-global momentum, or an outer
// optimizer) to the implementation: a new algorithm is one file and one row there.
//
// A round that cannot complete comes back as a value: membership_changed when the control
// plane aborted it (a member died, a peer asks to join, a view change began), timed_out
// when a wait passed its deadline. Inside, the transport's receive hook still aborts a wait
// by throwing MembershipChanged (control_plane.h): the receive loops of the algorithms and
// of their building blocks are many, and unwinding them is what the exception is for.
// run() is the one place that turns it, and TimeoutError, into the result. After such a
// round the model and the algorithm's state are undefined: the caller puts the model back
// and builds the algorithm anew for the next view.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gossip/algorithms/adaptive_compression.h"
#include "gossip/algorithms/exchange_spec.h"
#include "gossip/transport/transport.h"
#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::gossip {

/// Everything an algorithm is set up with for one view.
struct SyncSetup {
  Transport& transport;
  const ExchangeSpec& spec;
  std::vector<PeerId> members;   // the view's members, in the config's ring order
  int rank = 0;                  // this peer's index in members
  std::uint64_t first_round = 0;  // header round (view-tagged, view.h) of the first run()
  protocols::Span<float> model;  // what every run() mixes; stays valid and keeps its length
  protocols::CodecOptions codec_options;  // the spec's, with the density adaptive compression left
  AdaptiveCompression* adaptive = nullptr;  // the controller kept across views; null: none
};

/// How a round ended.
struct RoundResult {
  enum Status { done, membership_changed, timed_out };
  Status status = done;
  std::string why;  // for the log, when not done
};

/// What the last run() covered where it was more than one round that every member took
/// part in: a slow peer's deferred pseudo-gradient (deferred_outer_sync.h) spans several
/// rounds, and a round's state digests come only from the members whose pseudo-gradients it
/// averaged.
struct RoundSpan {
  std::uint64_t rounds = 1;  // rounds completed
  /// The job's iteration after them, when the other members' models are further along than
  /// this peer's (it did one period's steps while they did several).
  std::optional<std::uint64_t> iteration;
  std::vector<PeerId> published_by;  // who takes part in the last round's state check; empty: every member
};

/// What an algorithm keeps beyond the model between rounds (gradient tracking's tracker),
/// with the view and round it belongs to, as a checkpoint holds it.
struct AlgorithmState {
  std::vector<PeerId> members;  // of the view it was built for, ring order
  std::uint64_t round = 0;      // the round it continues with
  std::vector<float> values;    // empty: nothing to keep
};

class SyncAlgorithm {
 public:
  virtual ~SyncAlgorithm() = default;
  SyncAlgorithm() = default;
  SyncAlgorithm(const SyncAlgorithm&) = delete;
  SyncAlgorithm& operator=(const SyncAlgorithm&) = delete;

  /// One round on the model. `compute_seconds`, the compute since the last round, is what
  /// adaptive compression weighs the round's time against; `iteration` is the model's.
  /// Throws only what is not about the round's peers (InvalidArgument, IoError).
  RoundResult run(double compute_seconds = 0.0, std::uint64_t iteration = 0);
  /// What the last completed run() covered (the default: one round of every member).
  virtual RoundSpan span() const { return {}; }
  /// This peer takes part in no more rounds (the job ended for it at `iteration`).
  virtual void finish(std::uint64_t /*iteration*/) {}

  /// Messages this algorithm ignored, by reason.
  virtual std::map<std::string, std::uint64_t> drops() const = 0;
  /// Under a robust aggregator: how far each neighbour's model was, how often it was clipped.
  virtual std::map<PeerId, NeighbourStats> neighbour_stats() const { return {}; }
  /// The state a checkpoint must keep for the next round to continue exactly; empty values
  /// when there is none (the default).
  virtual std::vector<float> state() const { return {}; }
  /// Puts back what state() returned, in a view of the same members at the same round;
  /// false when it does not fit this algorithm (which then goes on as built).
  virtual bool restore(const std::vector<float>& values);
  /// The state beyond the model that every member holds bit for bit after a round (an outer
  /// optimizer's x₀ and momentum): what the members' state digests cover with the model, and
  /// what a member that lost their agreement overwrites with the majority's
  /// (gossip/control/state_hashes.h). Empty (the default) when there is none.
  virtual std::vector<protocols::Span<float>> shared_state() { return {}; }

 protected:
  /// The round itself; throws MembershipChanged or TimeoutError when it cannot complete.
  virtual void round(double compute_seconds) = 0;
  /// Lets an algorithm that wraps another run the other's round inside its own.
  static void round_of(SyncAlgorithm& inner, double compute_seconds) { inner.round(compute_seconds); }
  /// The model's iteration passed to the run() now under way.
  std::uint64_t iteration() const { return iteration_; }

 private:
  std::uint64_t iteration_ = 0;
};

/// Two model-sized vectors an algorithm carries between rounds once it has started (a start
/// point and a velocity; a returned and a reached model): what its state() saves, as their
/// concatenation, and its restore() puts back.
struct PairState {
  explicit PairState(std::size_t n) : first(n), second(n) {}
  /// Empty while not started.
  std::vector<float> values() const;
  /// False unless `values` holds both vectors; else takes them and counts as started.
  bool restore(const std::vector<float>& values);

  std::vector<float> first, second;
  bool started = false;
};

/// A round's options (AllreduceOptions, GossipOptions, ...) for the view: the spec's
/// timeout, and header rounds counted from the view's first.
template <class Options>
Options round_options(const SyncSetup& setup) {
  Options o;
  o.timeout = setup.spec.timeout;
  o.first_round = setup.first_round;
  return o;
}

/// An algorithm whose codec has a density (top-k fraction, threshold target) to steer.
class DensitySync : public SyncAlgorithm {
 public:
  /// From the next round on; InvalidArgument outside (0, 1].
  virtual void set_density(double density) = 0;
  /// Whether the last round was compressed, so its time says something about the density.
  virtual bool last_round_compressed() const { return true; }
};

}  // namespace starling::gossip
