#pragma once
// `starling keygen`: CURVE key pairs for a job's peers (peer<ID>.key / peer<ID>.pub for every
// [[peer]] of a config) or one named pair, written where [security] keys_dir will find them.
#include <string>

namespace starling::cli {

struct KeygenOptions {
  std::string out;     // folder for the key files
  std::string config;  // a topology config: one pair per [[peer]]
  std::string name;    // or one pair with this name
  bool force = false;  // replace existing files
};

/// 0 written, 1 a file could not be written, 2 bad arguments or config.
int run_keygen(const KeygenOptions& options);

}  // namespace starling::cli
