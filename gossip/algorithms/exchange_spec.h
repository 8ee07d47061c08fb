#pragma once
// What a peer's exchange with the others is: the mode, the topology, the peers, the codec,
// the deadlines, and how it copes with peers that die, join or flood it. Filled from the
// config's [exchange], [compression], [security] and [[peer]] sections (cli/config.cpp).
#include <chrono>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gossip/algorithms/adaptive_compression.h"
#include "gossip/algorithms/attack.h"
#include "gossip/algorithms/robust_aggregation.h"
#include "gossip/topology/topology.h"
#include "gossip/transport/curve.h"
#include "gossip/transport/message.h"
#include "gossip/transport/transport_context.h"
#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::gossip {

enum class ExchangeMode {
  none,
  allreduce,
  gossip,
  local_sgd,
  async_gossip,
  gradient_tracking,
  push_sum,
  exact_diffusion,
  clique_averaging
};
/// The config's name of each mode, indexed by ExchangeMode (a new mode adds its name here).
inline constexpr const char* kExchangeModeNames[] = {"none",      "allreduce",    "gossip",
                                                      "local-sgd", "async-gossip", "gradient-tracking",
                                                      "push-sum",  "exact-diffusion", "clique-averaging"};
static_assert(std::size(kExchangeModeNames) == static_cast<std::size_t>(ExchangeMode::clique_averaging) + 1,
              "one name per ExchangeMode");

/// Parses a name of kExchangeModeNames; false on anything else.
bool parse_exchange_mode(const std::string& text, ExchangeMode& out);
const char* exchange_mode_name(ExchangeMode mode);
/// Whether the mode mixes over exchange.topology (the neighbour-based modes).
bool uses_topology(ExchangeMode mode);

struct PeerAddress {
  PeerId id = 0;
  std::string endpoint;  // e.g. tcp://127.0.0.1:5601
  AttackSpec attack{};   // an attacking peer (attack.h); every peer knows, only attackers use it
  std::string public_key{};  // an open swarm's peers with CURVE: its key (Z85), learned at bootstrap
};

/// The attack of peer `id` among `peers` (none when it is not listed).
AttackSpec attack_of(const std::vector<PeerAddress>& peers, PeerId id);

/// Where a peer's training goes on after it joined a running job or fell behind: the round
/// of its next exchange and the iteration of the model it now holds.
struct Position {
  std::uint64_t round = 0;
  std::uint64_t iteration = 0;
  bool caught_up = false;  // a slow peer's deferred pseudo-gradient spanned the job's rounds since its last
};

struct ExchangeSpec {
  ExchangeMode mode = ExchangeMode::none;
  std::string topology = "ring";
  int random_degree = 3;
  uint64_t seed = 1;
  int clique_size = 0;  // d-cliques: peers per clique
  InterClique inter_clique = InterClique::fully_connected;  // d-cliques: how the cliques are joined
  int ring_peers = 0;   // ring-and-leaves: the peers on the ring (the rest are leaves)
  /// d-cliques: every peer's training samples per class, in `peers` order (empty: unknown,
  /// the cliques are then drawn by seed alone).
  std::vector<std::vector<double>> label_counts;
  int rank = 0;                    // this peer's index in `peers`
  std::vector<PeerAddress> peers;  // every peer, in ring order
  std::chrono::milliseconds timeout{60000};  // one round, one view change, one join
  std::string codec = "none";  // gossip: CHOCO-SGD; allreduce, local-sgd: compressed all-reduce
  protocols::CodecOptions codec_options;
  double gamma = 0.5;              // CHOCO consensus step; NoLoCo's pull toward the partner's outer model size
  double quasi_global_momentum = 0.0;  // gossip without a codec: QG-DSGDm's μ (0: plain D-PSGD)
  // clique-averaging: the momentum on the clique's mean change (the config's optimizer.momentum
  // and optimizer.nesterov, which the local optimizer then runs without)
  double clique_momentum = 0.0;
  bool clique_nesterov = false;
  // allreduce, local-sgd: SlowMo / DiLoCo's outer step, on compressed pseudo-gradients with a
  // codec; gossip: NoLoCo's with one random partner (α = 1, β = 0: none)
  double outer_lr = 1.0;        // α
  double outer_momentum = 0.0;  // β
  bool outer_nesterov = true;
  AggregatorSpec aggregator;  // gossip (D-PSGD): how received models are mixed in (robust_aggregation.h)
  uint64_t max_staleness = 4;      // async-gossip: steps a peer may run ahead of a neighbour
  bool staleness_scaling = false;  // async-gossip: divide the mixed-in change by the step gap; defer: weigh a late pseudo-gradient by 1/(1 + its staleness)
  /// allreduce, local-sgd: the outer step goes on without a slow peer and takes its
  /// pseudo-gradient at a later round (deferred_outer_sync.h); false: every round waits for every member.
  bool defer_slow_peers = false;
  /// Compressed gossip or all-reduce: steer the codec's density so that communication
  /// hides behind computation (gossip/algorithms/adaptive_compression.h); each change goes to on_adjust.
  bool adaptive = false;
  AdaptiveCompressionOptions adaptive_options;
  std::function<void(const std::string&)> on_adjust;
  /// CURVE: when set, every link is encrypted and only the listed peers' keys are admitted.
  /// The folder holds peer<ID>.key (this peer's secret) and peer<ID>.pub for every peer, as
  /// `starling keygen` writes them.
  std::string keys_dir;
  /// CURVE in an open swarm (instead of keys_dir): this peer's own pair, made at its start.
  /// Every client key is admitted (the invitation is the gate) and each peer id is bound to
  /// the key it joined with; the others' keys come with `peers` and with their join requests.
  CurveKeyPair swarm_keys;
  RefusalLog on_refusal;  // a stranger was refused (for the caller's log)
  /// Shared with the other peers of this process (an in-memory network, transport_context.h);
  /// null: the peer's own ZeroMQ context.
  std::shared_ptr<TransportContext> context;
  std::uint64_t first_round = 0;  // round of the first exchange(): a resumed peer's count goes on

  // Faults and elasticity (control_plane.h, elastic_sync.h, elastic_async.h).
  std::chrono::milliseconds heartbeat{500};         // the I/O thread beats this often
  std::chrono::milliseconds failure_timeout{5000};  // silence after which a peer is dead
  std::chrono::milliseconds start_timeout{30000};   // start: wait this long after the last new peer (job_start.h)
  int min_peers = 0;  // below this many live peers the exchange stops (TooFewPeers); 0: a majority
  bool join = false;  // join a running job at start (otherwise only when one is found running)
  /// An open swarm (docs/swarm.md): peers no roster lists join with an owner's invitation
  /// (gossip/control/join.h); `peers` is then the view the peer joined, in id order.
  bool swarm = false;
  std::string owner_key;        // the job owner's public key (gossip/control/invitation.h)
  std::string job_description;  // the canonical key=value lines of the job-defining keys
  std::string invitation;       // this peer's, sent with its join requests
  std::string advertise;        // where the others dial this peer (kBehindNat: nowhere); empty: its endpoint in `peers`
  std::size_t swarm_start_peers = 1;  // the first peer waits for this many members before round 0
  std::uint32_t max_message_bytes = 16u << 20;      // larger frames are dropped ("oversized")
  std::uint32_t max_messages_per_second = 50000;    // from one peer; more are dropped; 0: no cap
  std::vector<std::uint64_t> tensor_sizes;          // the model's shape, compared on joins
  std::function<void(const std::string&)> on_event;  // view changes, deaths, stragglers, drops
  std::function<void(const std::string&)> on_warning;  // members whose state lost agreement; null: on_event
  /// Tests only: called after each completed synchronous round, before its state digest is
  /// taken, with the round, the model and the algorithm's shared state, to corrupt them
  /// as a fault would (state_hashes.h).
  std::function<void(std::uint64_t, protocols::Span<float>, const std::vector<protocols::Span<float>>&)> fault_after_round;
  /// Tests only: corrupts a copy of each chunk of state this peer hands over on request,
  /// after its chunk digests were taken from the true state (a lying seeder).
  std::function<void(std::vector<float>&)> fault_in_served;
  /// Tests only: how long this peer waits before vouching for the model a joiner takes over
  /// (a member whose digest comes late).
  std::chrono::milliseconds vouch_delay{0};
};

/// The key-file name of a peer in a keys folder: "peer<ID>".
std::string peer_key_name(PeerId id);

}  // namespace starling::gossip
