#pragma once
// Short measurements on this machine that feed the scaling model (simulator/scaling_model.h):
// a learner's step time at a batch size, a codec's encode/decode rates and wire size, the
// loopback link's latency, bandwidth and CPU cost per byte through gossip's ZeroMQ
// transport, and the rate of the element-wise reduction. Each is a median of repeats, so one
// preempted repeat (the machine is shared) does not decide the figure. No model, no
// prediction here: only numbers with units.
#include "gossip/algorithms/exchange_spec.h"
#include "learners/replicas/learner.h"
#include "protocols/codec.h"

#include <cstddef>
#include <string>

namespace starling::simulator {

/// Seconds of one learner step (forward, backward, optimizer update) at `learner.batch`,
/// on synthetic data of the model's input shape, with `kernel_threads` threads per kernel
/// call, while `concurrent` replicas step at once on threads of their own (the peers that
/// share this host's cores: their memory traffic, and whatever else loads the machine, slow
/// each of them). `seconds_budget` bounds the whole probe (warm-up included).
double measure_step_seconds(const LearnerSpec& learner, int kernel_threads, int concurrent = 1,
                            double seconds_budget = 0.6);

struct CodecRates {
  std::string codec;
  double encode_seconds_per_element = 0.0;
  double decode_seconds_per_element = 0.0;
  double wire_bytes = 0.0;  // payload of one encode of the whole vector
};

/// Encodes and decodes a vector of `elements` floats (a model's size, values like a model
/// update's) with protocols::make_codec; throws std::invalid_argument for a bad codec.
CodecRates measure_codec(const std::string& codec, const protocols::CodecOptions& options, std::size_t elements);

struct LoopbackLink {
  double alpha_seconds = 0.0;        // one-way latency of a small message (half a round trip)
  double beta_bytes_per_second = 0.0;  // one stream of 1 MiB messages
  double cpu_seconds_per_byte = 0.0;   // CPU time (all threads) per byte moved by that stream
};

/// A ZeroMQ ping-pong and a bulk stream between two gossip::Transports on 127.0.0.1, each
/// with its own context and I/O thread, as two peer processes would have.
LoopbackLink measure_loopback();

/// Seconds of one step of a ring shift (every peer sends a `payload_bytes` message to its
/// right neighbour and waits for its left one's) among `peers` transports in this process,
/// each on a thread of its own with its own context, as `peers` peer processes on this host
/// would run. With 64 bytes and more threads than cores this is the context-switch-bound
/// latency of one all-reduce step on a crowded host; with 1 MiB, less that, the time per byte
/// when every peer of the host streams at once. At most 16 peers are started.
double measure_ring_step_seconds(int peers, std::size_t payload_bytes = 64);

/// Seconds for one thread to wake another and be woken back, halved: a hand-off between
/// the node's thread and a learner's (a step order and its report cost two).
double measure_handoff_seconds();

/// A host's peers training together: `peers` (at most 16) in this process, each a node
/// thread with `learners` learner threads and its own transport, doing `rounds` rounds of
/// `period` steps of every learner and one exchange() of gossip's real PeerExchange with
/// `exchange`'s mode, topology and codec among them on 127.0.0.1; the learners sample their
/// shards of `train_samples` (synthetic) samples.
struct HostRound {
  gossip::ExchangeSpec exchange;
  LearnerSpec learner;
  std::uint32_t train_samples = 60000;
  int learners = 1;
  int period = 1;
  int peers = 2;
  int rounds = 10;
};

/// Seconds of one such round (the harmonic mean over the peers: their rates add up), after
/// two warm-up rounds. Throws what PeerExchange throws (GossipError) when the peers cannot
/// bind or meet.
double measure_host_round_seconds(const HostRound& probe);

/// Seconds per element of dst[i] += src[i] (the all-reduce's reduction) over `elements` floats.
double measure_add_seconds_per_element(std::size_t elements);

}  // namespace starling::simulator
