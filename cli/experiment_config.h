#pragma once
// An experiment config: a base topology config, a shared target accuracy and epoch budget,
// and a list of [[variant]]s, each a name plus overrides of any key of the base. Parsing
// validates every variant's whole config, so a typo fails before anything runs.
//
//   [experiment]
//   name = "compare-sync"
//   base = "../fmnist-mlp-4peers-allreduce.toml"   # relative to this file
//   target_accuracy = 0.88
//   epochs = 5                                      # optional: run.epochs of every variant
//   baseline = "allreduce"                          # optional: the first variant
//   set = { "run.eval_every" = 0.5 }                # optional: overrides for every variant
//
//   [[variant]]
//   name = "gossip-ring"
//   set = { "exchange.mode" = "gossip", "exchange.topology" = "ring" }
//   system = "starling"        # or "torch-ddp": bench/torch_ddp.py on the same config
//   repeat = 1                 # runs with seeds seed, seed+1, ...
//   network = "loopback"       # or "netns:100mbit" / "netns:1gbit" (root; scripts/netns.sh)
//   base = "..."               # optional: another base config for this variant
#include "cli/config.h"

#include <optional>
#include <string>
#include <vector>

namespace starling::cli {

struct Variant {
  std::string name;
  std::string system = "starling";  // "starling" | "torch-ddp"
  std::string base;                 // config path, resolved against the experiment's folder
  std::vector<std::string> overrides;  // "section.key=value", the experiment's then the variant's
  int repeat = 1;
  std::string network;  // empty: loopback; else the tbf rate of "netns:RATE", e.g. "100mbit"
  Config config;        // base plus overrides, as the variant's first run will see it
};

struct ExperimentSpec {
  std::string source;  // the file it came from
  std::string name;
  std::string description;
  double target_accuracy = 0.0;
  std::string baseline;  // a variant's name
  std::vector<Variant> variants;
};

/// Reads and validates; throws ConfigError naming the file, line and key (for a variant's
/// overrides, the variant and the override).
ExperimentSpec load_experiment(const std::string& path);

}  // namespace starling::cli
