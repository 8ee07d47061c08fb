#pragma once
// What a node is asked to do and what it reports (actors/node.h runs it): the learners and
// how they are kept together, the exchange with other peers, checkpoints, and the run's
// result. Plain data, so that configs, schedules and monitors can hold it without the runner.
#include "gossip/peer_exchange.h"
#include "learners/replicas/trainer.h"

#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace starling::actors {

enum class IntraSync {
  sma,      // synchronous model averaging: replicas pulled toward z, z moves by their corrections
  average,  // synchronous SGD: gradients averaged, one shared model z
  none,     // independent replicas; z is their average, taken only when evaluating
};

/// The config's name of each mode, indexed by IntraSync.
inline constexpr const char* kIntraSyncNames[] = {"sma", "average", "none"};
static_assert(std::size(kIntraSyncNames) == static_cast<std::size_t>(IntraSync::none) + 1, "one name per IntraSync");

/// Parses a name of kIntraSyncNames; returns false on anything else.
bool parse_intra_sync(const std::string& text, IntraSync& out);
const char* intra_sync_name(IntraSync mode);

/// The node and its peers at one moment, for a live monitor (NodeSpec::on_snapshot): the
/// last order's figures, the run's times so far, and what the exchange knows of the peers.
struct NodeSnapshot {
  int64_t step = 0, total_steps = 0;
  double epoch = 0.0, loss = 0.0, samples_per_second = 0.0;
  int learners = 1, sync_every = 1;
  double wall_seconds = 0.0, compute_seconds = 0.0, exchange_seconds = 0.0, wait_seconds = 0.0;
  /// What the exchange knows, read only between mixes (exchange.overlap runs them beside the
  /// learners): false when this snapshot could not read it, so the fields below are empty.
  bool peers_read = false;
  std::vector<gossip::PeerStatus> peers;  // empty for a single node
  std::map<std::string, uint64_t> drops;  // by reason, as NodeResult::drops
  std::vector<uint32_t> members;
  uint64_t view_changes = 0;
  std::map<uint32_t, gossip::NeighbourStats> neighbours;
  /// (round, digest) of this peer's shared state after its last synchronous round
  /// (gossip/control/state_hashes.h); none outside the modes that hold one common model.
  std::optional<std::pair<uint64_t, uint64_t>> state_digest;
  bool final = false;  // taken after the node said goodbye: nothing follows
};

struct NodeSpec {
  TrainSpec train;
  /// kernels.backend = "auto": time train.learner's step on each backend at start and train
  /// on the faster (actors/backend_choice.h); train.learner.backend is then ignored.
  bool choose_backend = false;
  int learners = 1;  // 0: auto-tune (Crossbow): add learners while throughput rises
  IntraSync intra_sync = IntraSync::sma;
  double alpha = 0.0;     // SMA elasticity; 0 means 1/learners
  double momentum = 0.0;  // μ of the central model
  int sync_every = 1;     // iterations between SMA corrections
  int threads = 0;        // CAF scheduler threads; 0 means every core
  double autotune_threshold = 0.1;
  double autotune_window_seconds = 0.5;  // throughput is measured over at least this long
  int max_learners = 16;  // auto-tuning's ceiling; run_node lowers it to the cores
  /// Emulates a CPU this many times slower (≥ 1; tests of slow peers): after each order
  /// each learner sleeps (slowdown − 1) × the order's measured compute time, and reports
  /// the sleep as compute, so the node's figures read as those of a slower machine.
  double slowdown = 1.0;
  /// Learners on threads of their own (CAF detached actors): compute-bound replicas must run
  /// in parallel, and the work-stealing scheduler may queue two of them on one worker. They
  /// then run the SMA rounds among themselves (sma::SmaGroup), with no message per step.
  /// Off only under CAF's deterministic test scheduler, which runs scheduled actors alone.
  bool detached_learners = true;

  /// Across peers: mode none trains this node alone. Otherwise every `period` iterations
  /// (and after the last) z is mixed with the other peers', and this peer trains on its
  /// shard (exchange.rank of exchange.peers.size()) of the data, or on `part`.
  gossip::ExchangeSpec exchange;
  /// This peer's part of a non-IID partition (learners/data/partition.h), which its learners
  /// split IID among themselves; null: iid, every epoch's shard dealt from the whole set.
  std::shared_ptr<const std::vector<uint32_t>> part;
  /// An open swarm's split of the training set (docs/swarm.md): into data_parts equal parts,
  /// this peer training on data_part; 0: one part per peer of exchange.peers, by rank.
  int data_parts = 0;
  int data_part = 0;
  int period = 1;
  /// Average the node's gradient with the other peers' instead of mixing models (PyTorch
  /// DDP's step; needs intra_sync = average): each iteration the learners' mean gradient is
  /// all-reduced before the node's optimizer steps z, and there is no model exchange point.
  bool average_gradients = false;
  /// A round on the models as drawn before the first step of a fresh (not resumed) run, and
  /// of a peer that joined it before that round: DiLoCo's x₀ is then the initial model, and
  /// a compressed all-reduce finds its common model without sending it. Not with
  /// average_gradients.
  bool exchange_at_start = false;
  /// Mix beside the learners' compute (gossip/overlapped_exchange.h): at an exchange point z
  /// is snapshotted and mixed on a thread of its own while the learners go on, and the mix
  /// arrives at the next exchange point as z ← z + (mixed − snapshot), one exchange late.
  /// The exchange after the last iteration and one at a checkpoint are strict (z ← mixed),
  /// so nothing is in flight there and all-reduce and local-SGD peers end identical. Off: z
  /// is mixed on the node's thread while the learners wait. Not for async-gossip.
  bool overlap = false;
  /// With overlap, the mix lands this many iterations after its exchange point (fewer than
  /// `period`), waited for if it is still running; 0: at the next exchange point.
  int overlap_steps = 0;

  /// Checkpoints (learners/checkpoints/checkpoint.h, actors/node_checkpoint.h): every `checkpoint_every`
  /// iterations and after the last (0: never) the node writes everything it needs to continue exactly into
  /// `checkpoint_dir`, keeping the newest `checkpoint_keep`. With `resume` it continues from
  /// the newest valid checkpoint there, or starts afresh (with a warning) when there is none.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  int checkpoint_keep = 3;
  bool resume = false;

  /// A live monitor's hook (null: none): called on the metrics actor with a snapshot at most
  /// every `snapshot_every` seconds while the node trains, and once more, final, before
  /// run_node returns.
  std::function<void(const NodeSnapshot&)> on_snapshot;
  double snapshot_every = 0.5;
};

struct NodeResult {
  TrainResult train;
  kernels::Backend backend = kernels::Backend::native;  // the one trained on, "auto" resolved
  int learners = 1;
  IntraSync intra_sync = IntraSync::sma;  // as trained at the end: node.learners = "auto" may tune it
  int sync_every = 1;
  double compute_seconds = 0.0;    // mean learner time in forward/backward/update
  double imbalance_seconds = 0.0;  // waiting for the slowest learner
  double sync_seconds = 0.0;       // the node's averaging plus messaging
  std::vector<std::string> autotune_log;  // one line per auto-tuning decision
  uint64_t bytes_sent = 0, bytes_received = 0;
  /// Control messages of this run (a resumed run's count starts afresh): the cost of keeping
  /// the peers together (heartbeats, views, joins), apart from moving the model.
  uint64_t control_messages_sent = 0, control_messages_received = 0;
  double exchange_seconds = 0.0;  // time the node spent mixing with its peers (overlapped: waiting for the mix)
  double overlapped_seconds = 0.0;  // the mixes' own time beside the learners' steps (exchange.overlap)
  std::string resumed_from;       // the checkpoint this run continued from; empty for a fresh start
  int64_t resumed_from_step = 0;  // its iteration
  std::map<std::string, uint64_t> drops;  // messages from other peers dropped, by reason
  std::map<uint32_t, gossip::NeighbourStats> neighbours;  // robust aggregation: each neighbour seen
  uint64_t view_changes = 0;              // membership views this peer went through
  gossip::StateCheck state_check;         // the members' state digests (modes with a common model)
  std::vector<uint32_t> members;          // of the last view (synchronous modes)
  std::optional<int64_t> joined_at_step;  // the running job's step this peer joined at
  /// Per class, the distinct training samples the learners drew from in the first epoch:
  /// the peer's part under a partition, its first deal under iid (re-dealt every epoch).
  std::vector<int64_t> label_counts;
};

}  // namespace starling::actors
