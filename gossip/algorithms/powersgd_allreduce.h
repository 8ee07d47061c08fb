#pragma once
// PowerSGD inside the ring all-reduce (Vogels, Karimireddy & Jaggi 2019, with error
// feedback): the mean over peers of their rank-r approximations, by a true reduce of the
// low-rank factors rather than an all-gather of them. The vector is cut into segments and
// each segment viewed as a rows×cols matrix, as PowerSgdCodec does. With a Q that is the
// same on every peer:
//   P = mean_i(M_i Q)  (ring all-reduce),  P̂ = orthonormalized P (the same bits everywhere),
//   Q_i = M_iᵀ P̂,  Q̄ = mean_i(Q_i)  (ring all-reduce),  result P̂ Q̄ᵀ = P̂ P̂ᵀ mean_i(M_i).
// Both steps are linear in M, so the result is exactly the mean's projection onto span(P̂).
// A peer keeps M_i − P̂ Q_iᵀ as its residual, so that over all peers exactly what the
// result left out stays behind, and Q̄ warm-starts the next round. Why a reduce: each peer
// sends 2(p−1)/p of the factors instead of p−1 times them, and expands one product instead
// of p; the codec's structure (linear steps around one orthonormalization) is made for it.
//
// Contract as AllreduceRing: `ring` lists the peer ids in ring order and contains the
// transport's own id, the right neighbour is connected and the left one accepted, all peers
// call run() in lockstep. The two all-reduces use header rounds first_round + 2k and
// first_round + 2k + 1; each throws TimeoutError past options.timeout.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gossip/algorithms/allreduce_ring.h"
#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::gossip {

struct PowerSgdAllreduceOptions {
  std::size_t segment_bytes = 1 << 20;       // fp32 bytes per matrix
  std::chrono::milliseconds timeout{60000};  // for each of a run()'s two all-reduces
  std::uint64_t first_round = 0;
};

class PowerSgdAllreduce {
 public:
  /// Reads options rank (1..64), rows (0 = the divisor of a segment's length nearest
  /// its square root; else it must divide every segment's length) and seed (the first Q).
  /// InvalidArgument on bad options, or as AllreduceRing for the ring.
  PowerSgdAllreduce(Transport& transport, std::vector<PeerId> ring, std::size_t length,
                    const protocols::CodecOptions& codec_options, PowerSgdAllreduceOptions options = {});

  /// m: this peer's matrices M_i (the length given), left holding its residual M_i − P̂ Q_iᵀ;
  /// out: the mean approximation P̂ Q̄ᵀ, the same bits on every peer.
  void run(protocols::Span<float> m, protocols::Span<float> out);

  /// The Q̄ that warm-starts the next run (every block's Qᵀ), the same on every peer: what a
  /// checkpoint keeps. set_warm_start() puts it back; false, changing nothing, for a wrong
  /// length.
  protocols::Span<const float> warm_start() const { return qt_; }
  bool set_warm_start(protocols::Span<const float> qt);

  /// Factor entries each peer contributes per run: Σ rank·(rows + cols) over segments.
  std::size_t factor_count() const { return p_.size() + qt_.size(); }
  /// Messages the two all-reduces ignored, by reason.
  std::map<std::string, std::uint64_t> drops() const;

 private:
  struct Block {
    std::size_t begin, rows, cols, rank;  // elements [begin, begin + rows·cols)
    std::size_t p_begin, q_begin;         // offsets into p_ and qt_
  };

  void seed_columns(const Block& b, bool only_zero);

  std::size_t length_;
  std::uint32_t seed_key_;
  std::vector<Block> blocks_;
  std::vector<float> p_;   // every block's P, rows×rank, row-major
  std::vector<float> qt_;  // every block's Qᵀ, rank×cols
  std::unique_ptr<AllreduceRing> p_ring_;
  std::unique_ptr<AllreduceRing> q_ring_;
};

}  // namespace starling::gossip
