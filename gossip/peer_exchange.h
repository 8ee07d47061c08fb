#pragma once
// A peer's side of model exchange: owns the ZeroMQ context and transport, connects to the
// neighbours its mode needs, and mixes the peer's model with theirs once per call:
// `allreduce` and `local-sgd` replace it with the mean over all peers (ring all-reduce), or
// with a codec other than "none" with the common model plus the mean of the compressed
// changes (gossip/compressed_allreduce.h);
// `gossip` does one D-PSGD round with Metropolis–Hastings weights over the topology, or with
// a codec other than "none" one CHOCO-SGD round (compressed differences to public copies);
// `async-gossip` averages with one random neighbour, no barrier, within a staleness bound.
// In the synchronous modes every peer calls exchange() the same number of times; a missing
// peer ends in TimeoutError rather than a hang.
#include "gossip/adaptive_compression.h"
#include "gossip/allreduce_ring.h"
#include "gossip/async_gossip.h"
#include "gossip/choco_gossip.h"
#include "gossip/compressed_allreduce.h"
#include "gossip/curve.h"
#include "gossip/gossip_average.h"
#include "gossip/transport.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace starling::gossip {

enum class ExchangeMode { none, allreduce, gossip, local_sgd, async_gossip };

/// Parses "none", "allreduce", "gossip", "local-sgd" or "async-gossip"; false on anything else.
bool parse_exchange_mode(const std::string& text, ExchangeMode& out);
const char* exchange_mode_name(ExchangeMode mode);

/// Topology names: ring, torus, exponential, one-peer-exponential, complete, random.
bool is_topology_name(const std::string& name);

struct PeerAddress {
  PeerId id = 0;
  std::string endpoint;  // e.g. tcp://127.0.0.1:5601
};

struct ExchangeSpec {
  ExchangeMode mode = ExchangeMode::none;
  std::string topology = "ring";
  int random_degree = 3;
  uint64_t seed = 1;
  int rank = 0;                    // this peer's index in `peers`
  std::vector<PeerAddress> peers;  // every peer, in ring order
  std::chrono::milliseconds timeout{60000};
  std::string codec = "none";  // gossip: CHOCO-SGD; allreduce, local-sgd: compressed all-reduce
  protocols::CodecOptions codec_options;
  double gamma = 0.5;              // CHOCO consensus step size
  uint64_t max_staleness = 4;      // async-gossip: steps a peer may run ahead of a neighbour
  bool staleness_scaling = false;  // async-gossip: divide the mixed-in change by the step gap
  /// Compressed gossip or all-reduce: steer the codec's density so that communication
  /// hides behind computation (gossip/adaptive_compression.h); each change goes to on_adjust.
  bool adaptive = false;
  AdaptiveCompressionOptions adaptive_options;
  std::function<void(const std::string&)> on_adjust;
  /// gossip: after the last round, one exact all-reduce of the models (average_models()),
  /// so the job ends with one model, the peers' average, rather than p nearby ones.
  bool final_average = true;
  /// CURVE: when set, every link is encrypted and only the listed peers' keys are admitted.
  /// The folder holds peer<ID>.key (this peer's secret) and peer<ID>.pub for every peer, as
  /// `starling keygen` writes them.
  std::string keys_dir;
  RefusalLog on_refusal;  // a stranger was refused (for the caller's log)
  std::uint64_t first_round = 0;  // round of the first exchange(): a resumed peer's count goes on
};

/// The key-file name of a peer in a keys folder: "peer<ID>".
std::string peer_key_name(PeerId id);

class PeerExchange {
 public:
  /// Binds this peer's endpoint and connects to its neighbours; `model` must stay valid
  /// and keep its length for the exchanger's lifetime. Throws GossipError.
  PeerExchange(const ExchangeSpec& spec, protocols::Span<float> model);
  ~PeerExchange();

  /// One mixing of the model with the peers (see the file comment); `step` is this peer's
  /// iteration, which async-gossip uses for its staleness bound, and `compute_seconds` the
  /// time spent computing since the last exchange, which adaptive compression weighs
  /// against the time this exchange takes.
  void exchange(uint64_t step, double compute_seconds = 0.0);
  /// gossip with final_average: replaces the model with the exact mean over all peers (a
  /// ring all-reduce; every peer calls it once, after its last exchange). Nothing otherwise.
  void average_models();
  /// async-gossip: says goodbye and answers the neighbours until they have all finished, so
  /// nobody waits on a peer that is gone. Nothing to do in the synchronous modes.
  void finish();

  /// async-gossip: the mean step gap to the slowest neighbour over the exchanges so far.
  std::optional<double> mean_staleness() const;

  uint64_t bytes_sent() const;
  uint64_t bytes_received() const;
  const ExchangeSpec& spec() const { return spec_; }

 private:
  void run_compressed(double compute_seconds);

  ExchangeSpec spec_;
  protocols::Span<float> model_;
  zmq::context_t context_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<AllreduceRing> ring_;
  std::unique_ptr<AllreduceRing> final_ring_;  // gossip's closing average
  std::unique_ptr<CompressedAllreduce> compressed_;
  std::unique_ptr<GossipAverage> gossip_;
  std::unique_ptr<ChocoGossip> choco_;
  std::unique_ptr<AsyncGossip> async_;
  std::unique_ptr<AdaptiveCompression> adaptive_;
};

}  // namespace starling::gossip
