#pragma once
// A peer's side of model exchange: owns the ZeroMQ context and transport, connects to the
// neighbours its mode needs, and mixes the peer's model with theirs once per call:
// `allreduce` and `local-sgd` replace it with the mean over all peers (ring all-reduce),
// `gossip` does one D-PSGD round with Metropolis–Hastings weights over the topology.
// Every peer must call exchange() the same number of times; a missing peer ends in
// TimeoutError rather than a hang.
#include "gossip/allreduce_ring.h"
#include "gossip/curve.h"
#include "gossip/gossip_average.h"
#include "gossip/transport.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace starling::gossip {

enum class ExchangeMode { none, allreduce, gossip, local_sgd };

/// Parses "none", "allreduce", "gossip" or "local-sgd"; returns false on anything else.
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
  /// CURVE: when set, every link is encrypted and only the listed peers' keys are admitted.
  /// The folder holds peer<ID>.key (this peer's secret) and peer<ID>.pub for every peer, as
  /// `starling keygen` writes them.
  std::string keys_dir;
  RefusalLog on_refusal;  // a stranger was refused (for the caller's log)
};

/// The key-file name of a peer in a keys folder: "peer<ID>".
std::string peer_key_name(PeerId id);

class PeerExchange {
 public:
  /// Binds this peer's endpoint and connects to its neighbours; `model` must stay valid
  /// and keep its length for the exchanger's lifetime. Throws GossipError.
  PeerExchange(const ExchangeSpec& spec, protocols::Span<float> model);
  ~PeerExchange();

  /// One mixing of the model with the peers (see the file comment).
  void exchange();

  uint64_t bytes_sent() const;
  uint64_t bytes_received() const;
  const ExchangeSpec& spec() const { return spec_; }

 private:
  ExchangeSpec spec_;
  protocols::Span<float> model_;
  zmq::context_t context_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<AllreduceRing> ring_;
  std::unique_ptr<GossipAverage> gossip_;
};

}  // namespace starling::gossip
