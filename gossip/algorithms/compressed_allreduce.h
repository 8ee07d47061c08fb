#pragma once
// Model averaging across all peers with a codec, for the exchange modes allreduce and
// local-sgd: every run() leaves every peer with the identical model, the common model of
// the previous run (base) plus the mean over peers of their compressed changes since then.
// Each peer's change carries what compression left out before (error feedback):
// Δ_i = x_i − base + r_i, and r_i keeps what did not reach the mean this time. How Δ_i
// travels is the codec row's route (protocols/codec_row.h):
//   ring         (fp16, bf16, qsgd, ...) Δ_i by ring all-reduce with 16-bit or quantized
//                (qsgd: `bits` per entry and a scale per bucket) segments, added in fp32
//                (AllreduceRing with that wire); the ring's rounding errors go to r_i.
//   low_rank     (powersgd) a true reduce of the low-rank factors (PowerSgdAllreduce; why there).
//   gather       (threshold, topk, sign, ...)
//                each peer encodes Δ_i per segment (one codec stream per segment, the
//                codec keeping in r_i what it did not send); the payloads, of different
//                sizes on every peer, go around by a ring all-gather (RingAllgather); every
//                peer decodes all of them in rank order into the same sum.
// The first run() makes base identical on every peer: when their models are already the
// same bits (a job's start, every peer having drawn the same initial model), found by two
// all-reduces of a few floats (a hash of each model, then every peer's verdict), it sends
// nothing more; otherwise it is a plain fp32 ring all-reduce of the models themselves. A caller
// that moves the common model after a run, alike on every peer (an outer optimizer's step),
// says so with rebase(), so that the next changes are taken from where it moved it.
//
// Contract as AllreduceRing: `ring` lists the peer ids in ring order and contains the
// transport's own id, the right neighbour is connected and the left one accepted, all
// peers call run() in lockstep with the same model length, and the transport carries
// nothing else meanwhile. run() throws TimeoutError past options.timeout (per all-reduce);
// bad frames are dropped and counted (drops()), never applied.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gossip/algorithms/allreduce_ring.h"
#include "gossip/algorithms/powersgd_allreduce.h"
#include "gossip/algorithms/ring_allgather.h"
#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::gossip {

struct CompressedAllreduceOptions {
  std::size_t segment_bytes = 1 << 20;       // fp32 bytes (uncompressed) per segment
  std::chrono::milliseconds timeout{60000};  // for each all-reduce or all-gather of a run()
  std::uint64_t first_round = 0;  // header round of the first run(); later runs count up
};

class CompressedAllreduce {
 public:
  /// `model` must stay valid and keep its length. InvalidArgument for a codec other than
  /// those above ("none" included: use AllreduceRing), bad codec options, or a bad ring.
  CompressedAllreduce(Transport& transport, std::vector<PeerId> ring, protocols::Span<float> model,
                      const std::string& codec, const protocols::CodecOptions& codec_options = {},
                      CompressedAllreduceOptions options = {});

  /// Replaces the model with base + the mean of the peers' compressed changes.
  void run();

  /// threshold, topk: encodes with this density from the next run on (the codec streams
  /// restart, the residual stays); no effect for the other codecs. InvalidArgument outside (0, 1].
  void set_density(double density);

  /// The model as it is now is the common model (identical on every peer): the next run's
  /// changes are taken from it.
  void rebase();
  /// What a checkpoint keeps for the next run() to go on exactly, beside the common model:
  /// the residual, then powersgd's warm-start Q̄, then where each codec stream's random
  /// draws stand (QSGD's rounding, top-k's sampling; state_counts.h). Empty before the
  /// first run().
  std::vector<float> state() const;
  /// Continues as a peer that has run already, from this common model and a state() (or the
  /// residual alone, as checkpoints kept before the draws: the streams then restart); false,
  /// changing nothing, for a state of another length or with a draw that is not one.
  bool resume(protocols::Span<const float> base, protocols::Span<const float> state);

  /// Runs done, the first (uncompressed) one included.
  std::uint64_t runs() const { return runs_; }
  /// Entries this peer sent in the last run (encoded entries, or factor entries).
  std::size_t last_sent() const { return last_sent_; }
  /// The common model of the last run.
  protocols::Span<const float> base() const { return base_; }
  /// The same, for the members' state check to overwrite with the majority's (elastic_sync.h).
  protocols::Span<float> base() { return base_; }
  /// What this peer's compression has left out so far, in units of the peers' sum.
  protocols::Span<const float> residual() const { return residual_; }
  std::map<std::string, std::uint64_t> drops() const;

 private:
  enum class Kind { ring, powersgd, gather };

  void run_gather();
  bool same_models_everywhere();
  std::vector<std::uint64_t> draws() const;  // one per codec stream (none for powersgd)
  void set_draws(const std::vector<std::uint64_t>& draws);

  Transport& transport_;
  protocols::Span<float> model_;
  std::string codec_name_;
  protocols::CodecOptions codec_options_;
  Kind kind_ = Kind::gather;
  std::uint64_t runs_ = 0;
  std::size_t last_sent_ = 0;
  std::vector<float> base_;      // the common model after the last run
  std::vector<float> change_;    // Δ_i, then the mean change
  std::vector<float> residual_;  // r_i
  std::unique_ptr<AllreduceRing> first_;  // the uncompressed first run, on the model
  std::vector<float> hash_lanes_, verdict_;  // the first run's check that the models agree
  std::unique_ptr<AllreduceRing> hash_ring_, verdict_ring_;
  std::unique_ptr<AllreduceRing> narrow_;  // Kind::ring
  std::unique_ptr<PowerSgdAllreduce> powersgd_;
  std::unique_ptr<RingAllgather> gather_;
  std::vector<std::unique_ptr<protocols::Codec>> codecs_;  // one stream per segment (gather)
  std::vector<std::vector<std::uint8_t>> payloads_;        // this peer's, per segment
};

}  // namespace starling::gossip
