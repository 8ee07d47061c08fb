#pragma once
// A job's configuration as the job library (job/) takes it: what to train, on which data,
// across which peers, read and validated whole by cli/config.h before anything runs. A
// problem that only running the job finds (data that does not fit the model, a split that
// leaves a peer nothing) is a ConfigError naming the file, the line and the key all the same;
// the CLI turns it into exit code 2.
#include "actors/node_spec.h"
#include "learners/data/partition.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace starling::job {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunOptions {
  std::string name = "run";
  uint64_t seed = 1;
  double epochs = 1.0;
  double target_accuracy = 0.0;
  double eval_every = 1.0;  // epochs between evaluations
  int64_t steps = 0;        // text: training steps of one batch each (0: one)
  int64_t eval_steps = 0;   // text: steps between validations (0: only at the end)
  double target_bpb = 0.0;  // text: validation bits per byte to reach
  std::string data_dir;     // packed-dataset cache; empty: $STARLING_DATA_DIR or ~/.cache/starling
  std::string out_dir = "results";
  std::string init_from;     // a safetensors file with nanoGPT's names to start training from; empty: the seed's draw
  std::string init_from_at;  // where run.init_from was set, for the errors that reading the file finds
};

struct DataOptions {
  std::string dataset = "fashion-mnist";  // "fashion-mnist" | "idx" | "cifar10" | "synthetic" | "text"
  std::string path;                       // the set's folder (text: a file or a folder); empty: Debian's Fashion-MNIST
  double validation_fraction = 0.1;       // text: each file's last fraction of bytes validates
  std::string tokenizer = "bytes";        // text: "bytes" | "sentencepiece" (learners/data/tokenizer.h)
  int vocab_size = 2048;                  // sentencepiece: the model's vocabulary
  std::string tokenizer_model;            // sentencepiece: its model file (trained when missing)
  std::string tokenizer_type = "bpe";     // sentencepiece: "bpe" | "unigram", when trained
  int synthetic_train = 6000;
  int synthetic_test = 1000;
  PartitionSpec partition;  // across peers (learners/data/partition.h); its seed mixed from run.seed
  /// Where data.partition, data.alpha and data.classes_per_peer were set, for the errors of
  /// check_partition (job/data_partition.h), which needs the labels.
  std::string partition_at, alpha_at, classes_per_peer_at;
  /// Where data.dataset, data.path and model.context were set, for the errors that only
  /// reading text finds (job/data_source.h).
  std::string dataset_at, path_at, context_at;
  /// Where data.tokenizer_model was set (or data.tokenizer, when its default path is used),
  /// for the errors of reading or training the model.
  std::string tokenizer_model_at;
};

/// [launch]: how `starling launch` runs the peers on this host, and where a job's peers
/// come from: the [[peer]] list, or the allocation of a cluster launcher (cli/allocation.h).
struct LaunchSettings {
  bool in_process = false;  // every peer a thread of one process (job/in_process_launch.h)
  std::string endpoints = "peers";  // "peers" | "slurm" | "openmpi"
  int base_port = 5600;             // an allocation's first port on each node
  std::string endpoints_at;         // where launch.endpoints was set, for its errors
};

/// [monitor]: a peer's metrics and live page (docs/monitoring.md).
struct MonitorSettings {
  int metrics_port = 0;  // the first peer's port, peer of index r at metrics_port + r; 0: off
  std::string bind = "127.0.0.1";
  double linger_seconds = 0.0;  // keep serving this long after training ends
  std::string port_at;          // where metrics_port was set, for its errors
};

/// One `[[peer]]` of a topology config.
struct PeerEntry {
  uint32_t id = 0;
  std::string endpoint;  // tcp://host:port
  int learners = 0;      // 0: [node] learners
  int count = 1;         // read_peers expands an entry of count n into n peers (ids and ports in a row)
  gossip::AttackSpec attack;  // an attacking peer (gossip/algorithms/attack.h); none by default
  std::string attack_at;      // where `attack` was set, for errors
};

struct Config {
  std::string source;  // the file it came from
  RunOptions run;
  DataOptions data;
  actors::NodeSpec node;  // [node] plus, in node.train, model, optimizer, schedule, batch, backend
  int kernel_threads = 1;  // [kernels] threads
  /// Where exchange.clique_size was set, for the errors that only the labels find
  /// (a clique lacking a class: job/data_partition.h).
  std::string clique_size_at;
  LaunchSettings launch;
  MonitorSettings monitor;
  std::vector<PeerEntry> peers;  // [[peer]]; node.exchange is filled from these and [exchange]
  /// With endpoints from an allocation: this process's index into `peers`, as its launcher
  /// numbered it (SLURM_PROCID, OMPI_COMM_WORLD_RANK).
  std::optional<std::size_t> allocation_rank;
  double swarm_join_timeout_seconds = 30.0;  // swarm.join_timeout_seconds
  int swarm_data_parts = 4;                  // swarm.data_parts
};

}  // namespace starling::job
