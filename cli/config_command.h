#pragma once
// `starling config`: a config with every key resolved (defaults and --set overrides applied),
// as TOML or JSON, or the schema of every key (the README's table, or JSON).
#include <string>
#include <vector>

namespace starling::cli {

struct ConfigOptions {
  std::string config;  // empty with `schema`
  std::vector<std::string> overrides;
  bool schema = false;
  bool json = false;
};

/// Returns the exit code: 0 printed, 2 bad configuration (or neither a config nor --schema).
int run_config(const ConfigOptions& options);

}  // namespace starling::cli
