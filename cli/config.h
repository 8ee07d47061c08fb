#pragma once
// The run configuration: a TOML file plus `--set section.key=value` overrides, validated
// whole before anything runs, against the schema of cli/config_schema.h, into the job's
// config (job/config.h). Every problem is a ConfigError naming the file, the line (when the
// TOML gives one), the key and what was expected; the CLI turns it into exit code 2.
#include "cli/allocation.h"
#include "job/config.h"

#include <string>
#include <vector>

namespace starling::cli {

using job::Config;
using job::ConfigError;
using job::DataOptions;
using job::LaunchSettings;
using job::MonitorSettings;
using job::PeerEntry;
using job::RunOptions;

/// Reads, overrides and validates; throws ConfigError. With launch.endpoints from an
/// allocation, the peers come from this process's environment.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

/// The same from TOML text (tests); `name` stands in for the file name in errors, `env` for
/// the process's environment.
Config parse_config(const std::string& text, const std::string& name, const std::vector<std::string>& overrides = {},
                    const Environment& env = process_environment());

/// The job the config at `path` describes, as a swarm compares it (docs/swarm.md): one
/// `section.key=value` line per job-defining key (not KeySpec::per_peer), in schema order,
/// values after defaults and overrides. Validated as load_config validates.
std::string job_description(const std::string& path, const std::vector<std::string>& overrides);

/// Every key of the config at `path` with its value after defaults and overrides, as TOML
/// or, with `json`, as a JSON object {section: {key: value}} with the [[peer]] entries as
/// "peer": what `starling config` prints and the PyTorch references read. Validated as
/// load_config validates; throws ConfigError.
std::string resolved_config(const std::string& path, const std::vector<std::string>& overrides, bool json);

}  // namespace starling::cli
