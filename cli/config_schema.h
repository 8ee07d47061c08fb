#pragma once
// The config's keys, each defined once: its dotted name, type, default, allowed values, a
// one-line doc, and where its value goes in a Config. The parser (cli/config.cpp), the
// README's key table and `starling config --schema` read this table; the rules that join
// several keys, which a row cannot state, are in config_checks.cpp.
#include "cli/config.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace starling::cli {

enum class KeyKind {
  flag,             // true or false
  integer,          // in [int_min, int_max]
  integer_or_auto,  // in [int_min, int_max], or "auto", read as 0
  number,           // finite, in [min, max] ((min, max] when open_min)
  number_or_adaptive,  // a number as `number`, or "adaptive", read as 0
  text,             // any string
  path,             // a string naming a file or folder, relative to the config file
  choice,           // one of `choices`
  integers,         // an array of positive integers
  layers,           // an array of layer tables, read by cli/model_config.cpp
};

/// A key's value once read: from the file, a --set override, or its default.
struct KeyValue {
  bool given = false;  // set in the file or by --set
  std::string at;      // where, as errors name it: "file:line: section.key" or "--set section.key: section.key"
  bool flag = false;
  int64_t integer = 0;
  double number = 0.0;
  std::string text;  // text, path and choice
  std::vector<int> integers;
};

/// What a key holds: its kind, its default (in `fallback`) and its allowed values.
struct KeyType {
  KeyKind kind = KeyKind::text;
  KeyValue fallback;
  int64_t int_min = 0, int_max = 0;
  double min = 0.0, max = 0.0;
  bool open_min = false;
  std::vector<std::string> choices;
  bool required = false;  // no default: the key must be set ([[peer]] id and endpoint)
};

/// One row of the schema. `name` is "section.key"; section "peer" is every [[peer]] table.
/// `apply` puts the value into the Config (or into its last [[peer]] entry); null for keys
/// read only by the rules across keys.
struct KeySpec {
  std::string name;
  KeyType type;
  std::string doc;
  std::function<void(const KeyValue& value, Config& config)> apply;
  /// The key may differ between the peers of one job (where files lie, threads, ports, the
  /// monitor); every other key defines the job, and a swarm's newcomer must match it.
  bool per_peer = false;
};

/// Every key, grouped by section in the order the README lists them.
const std::vector<KeySpec>& config_schema();

/// The sections in schema order ("run", "data", ..., "peer").
std::vector<std::string> config_sections();

/// The section and key of a dotted name ("exchange.mode" -> "exchange", "mode").
std::pair<std::string, std::string> split_key(const std::string& name);

/// Defaults that follow another key (exchange.period is 10 under local SGD, model.kind is
/// "layers" when a layer list is given, security.keys_dir is empty without security.curve);
/// `values` is in schema order.
void resolve_dependent_defaults(std::vector<KeyValue>& values);

/// Values a key hands to another's place once every value is applied: under
/// exchange.mode = "clique-averaging" SGD's momentum (optimizer.momentum, nesterov) leaves
/// the local optimizer for the clique's mean change (gossip/algorithms/clique_averaging_sync.h);
/// an unset data.tokenizer_model takes its place beside run.checkpoint_dir (or run.out_dir).
void move_across_keys(Config& config);

/// The rules across keys, once every value is applied: combinations that rule each other
/// out are a ConfigError naming where the offending key was set.
void check_across_keys(const std::vector<KeyValue>& values, const Config& config);

}  // namespace starling::cli
