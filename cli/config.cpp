#include "cli/config.h"

#include "cli/config_schema.h"
#include "cli/model_config.h"
#include "cli/section_reader.h"
#include "job/task_kind.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

namespace starling::cli {

using job::task_kind;

namespace {

// A folder named in the config is relative to the config file, so a job folder carries its
// keys and checkpoints wherever it is run from; empty stays empty.
std::string relative_to_config(const std::string& dir, const std::string& file) {
  if (dir.empty() || std::filesystem::path(dir).is_absolute() || file.find('/') == std::string::npos) return dir;
  return (std::filesystem::path(file).parent_path() / dir).string();
}

// The [[peer]] entry that "--set peer.<index>.<key>=value" names (an index into the list).
toml::table* peer_table(toml::table& root, const std::string& item, const std::string& key) {
  const auto dot = key.find('.');
  toml::array* peers = root["peer"].as_array();
  const std::size_t count = peers ? peers->size() : 0;
  std::size_t index = count;
  if (dot != std::string::npos && dot > 0 && dot <= 6 && key.find_first_not_of("0123456789") == dot) index = std::stoul(key.substr(0, dot));
  if (dot == std::string::npos || dot + 1 == key.size() || index >= count || !(*peers)[index].is_table())
    throw ConfigError("--set " + item + ": expected peer.<index>.<key>=value with an index below the " +
                      std::to_string(count) + " [[peer]] entries");
  return (*peers)[index].as_table();
}

// "section.key=value": the value is read as TOML (so 0.1, true, [1,2] and "text" work) and
// falls back to a bare string.
std::set<std::string> apply_overrides(toml::table& root, const std::vector<std::string>& overrides) {
  std::set<std::string> keys;
  for (const auto& item : overrides) {
    const auto eq = item.find('=');
    const auto dot = item.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq)
      throw ConfigError("--set " + item + ": expected section.key=value");
    const std::string section = item.substr(0, dot), key = item.substr(dot + 1, eq - dot - 1), value = item.substr(eq + 1);
    toml::table parsed;
    try {
      parsed = toml::parse("v = " + value);
    } catch (const toml::parse_error&) {
      parsed = toml::table{{"v", value}};
    }
    auto* table = section == "peer" ? peer_table(root, item, key) : root[section].as_table();
    if (!table) {
      root.insert_or_assign(section, toml::table{});
      table = root[section].as_table();
    }
    table->insert_or_assign(section == "peer" ? key.substr(key.find('.') + 1) : key, std::move(*parsed.get("v")));
    keys.insert(section + "." + key);
  }
  return keys;
}

// The sections the schema names, or a ConfigError at the first one it does not.
void check_sections(const toml::table& root, const std::string& file) {
  const std::vector<std::string> sections = config_sections();
  for (const auto& [key, node] : root) {
    if (std::find(sections.begin(), sections.end(), std::string(key.str())) != sections.end()) continue;
    std::string list;
    for (const auto& s : sections) list += (list.empty() ? "" : ", ") + s;
    const std::string where = file + (node.source().begin.line > 0 ? ":" + std::to_string(node.source().begin.line) : "");
    throw ConfigError(where + ": [" + std::string(key.str()) + "]: unknown section (expected one of " + list + ")");
  }
}

bool in_peer(const KeySpec& spec) { return split_key(spec.name).first == "peer"; }

// One key's value from its section, checked against its row; the row's default when unset.
KeyValue read_key(SectionReader& r, const KeySpec& spec, const std::string& file) {
  const std::string key = split_key(spec.name).second;
  const KeyType& t = spec.type;
  KeyValue v = t.fallback;
  v.given = r.has(key);
  v.at = r.where(key);
  if (t.required && !v.given) throw ConfigError(v.at + ": missing");
  switch (t.kind) {
    case KeyKind::flag: v.flag = r.boolean(key, v.flag); break;
    case KeyKind::integer_or_auto:
      if (r.is_text(key)) {
        r.choice(key, "auto", {"auto"});
        v.integer = 0;
        break;
      }
      [[fallthrough]];
    case KeyKind::integer: v.integer = r.integer(key, v.integer, t.int_min, t.int_max); break;
    case KeyKind::number_or_adaptive:
      if (r.is_text(key)) {
        r.choice(key, "adaptive", {"adaptive"});
        v.number = 0.0;
        break;
      }
      [[fallthrough]];
    case KeyKind::number: v.number = r.number(key, v.number, t.min, t.max, t.open_min); break;
    case KeyKind::text: v.text = r.text(key, v.text); break;
    case KeyKind::path: v.text = relative_to_config(r.text(key, v.text), file); break;
    case KeyKind::choice: v.text = r.choice(key, v.text, t.choices); break;
    case KeyKind::integers: v.integers = r.positive_ints(key, v.integers); break;
    case KeyKind::layers: r.take_external(key); break;
  }
  return v;
}

// Every key of the sections ([[peer]] aside), in schema order; a key no row names is an error.
std::vector<KeyValue> read_sections(const toml::table& root, const std::string& file, const std::set<std::string>& overridden) {
  const auto& schema = config_schema();
  std::vector<KeyValue> values(schema.size());
  for (const std::string& section : config_sections()) {
    if (section == "peer") continue;
    SectionReader r(root, section, file, overridden);
    for (std::size_t i = 0; i < schema.size(); ++i)
      if (split_key(schema[i].name).first == section) values[i] = read_key(r, schema[i], file);
    r.finish();
  }
  return values;
}

// A value as the resolved config shows it (node.learners' 0 as "auto").
void put(toml::table& table, const KeySpec& spec, const KeyValue& v) {
  const std::string key = split_key(spec.name).second;
  switch (spec.type.kind) {
    case KeyKind::flag: table.insert(key, v.flag); break;
    case KeyKind::integer_or_auto:
      if (v.integer == 0) table.insert(key, "auto");
      else table.insert(key, v.integer);
      break;
    case KeyKind::integer: table.insert(key, v.integer); break;
    case KeyKind::number_or_adaptive:
      if (v.number == 0.0) table.insert(key, "adaptive");
      else table.insert(key, v.number);
      break;
    case KeyKind::number: table.insert(key, v.number); break;
    case KeyKind::text:
    case KeyKind::path:
    case KeyKind::choice: table.insert(key, v.text); break;
    case KeyKind::integers: {
      toml::array list;
      for (int i : v.integers) list.push_back(i);
      table.insert(key, std::move(list));
      break;
    }
    case KeyKind::layers: break;  // copied as written, by resolved_table
  }
}

// The `count` peers a [[peer]] entry stands for: ids and ports in a row from its own.
std::vector<PeerEntry> expand_peer(const PeerEntry& first, SectionReader& r) {
  if (first.count == 1) return {first};
  const auto colon = first.endpoint.rfind(':');
  long port = -1;
  try {
    port = std::stol(first.endpoint.substr(colon + 1));
  } catch (const std::exception&) {
  }
  if (colon == std::string::npos || port <= 0 || port + first.count - 1 > 65535)
    r.reject("count", "an endpoint with a port that leaves room for `count` ports in a row");
  if (static_cast<uint64_t>(first.id) + static_cast<uint64_t>(first.count) - 1 > 0x7FFFFFFFu)
    r.reject("count", "ids that stay below 2^31");
  std::vector<PeerEntry> out;
  for (int k = 0; k < first.count; ++k) {
    PeerEntry p = first;
    p.id += static_cast<uint32_t>(k);
    p.endpoint = first.endpoint.substr(0, colon + 1) + std::to_string(port + k);
    p.count = 1;
    out.push_back(std::move(p));
  }
  return out;
}

// [[peer]] id, endpoint, learners: every peer of the job, in ring order; each entry's values
// also go to `resolved`.
void read_peers(const toml::table& root, const std::string& file, Config& c, toml::array& resolved) {
  const toml::node* node = root.get("peer");
  if (!node) return;
  const toml::array* list = node->as_array();
  if (!list || !list->is_array_of_tables())
    throw ConfigError(file + (node->source().begin.line > 0 ? ":" + std::to_string(node->source().begin.line) : "") +
                      ": peer: expected [[peer]] tables");
  std::set<uint32_t> ids;
  for (const auto& item : *list) {
    SectionReader r(*item.as_table(), "peer", file);
    c.peers.emplace_back();
    toml::table entry;
    for (const KeySpec& spec : config_schema())
      if (in_peer(spec)) {
        const KeyValue v = read_key(r, spec, file);
        spec.apply(v, c);
        put(entry, spec, v);
      }
    r.finish();
    const PeerEntry first = c.peers.back();
    if (first.endpoint.rfind("tcp://", 0) != 0) r.reject("endpoint", "a tcp://host:port string");
    c.peers.pop_back();
    for (PeerEntry& peer : expand_peer(first, r)) {
      if (!ids.insert(peer.id).second) throw ConfigError(r.where("id") + ": " + std::to_string(peer.id) + " appears twice");
      entry.insert_or_assign("id", static_cast<int64_t>(peer.id));
      entry.insert_or_assign("endpoint", peer.endpoint);
      entry.insert_or_assign("count", int64_t{1});
      resolved.push_back(entry);
      c.peers.push_back(std::move(peer));
    }
  }
  for (const auto& peer : c.peers) {
    if (peer.learners != c.peers.front().learners)
      throw ConfigError(file + ": peer.learners: every peer needs the same learner count (they run the same number of iterations)");
    c.node.exchange.peers.push_back({peer.id, peer.endpoint, peer.attack});
  }
}

// launch.endpoints from an allocation: the job's peers from the launcher's environment, in
// place of a [[peer]] list, and this process's rank among them.
void read_allocation(const Environment& env, Config& c, toml::array& resolved) {
  const std::string kind = c.launch.endpoints;
  if (kind == "peers") return;
  const std::string at = c.launch.endpoints_at + ": \"" + kind + "\": ";
  if (!c.peers.empty())
    throw ConfigError(at + "expected no [[peer]] entries (the job's peers come from the allocation)");
  Allocation a;
  try {
    a = kind == "slurm" ? slurm_allocation(env, c.launch.base_port) : openmpi_allocation(env, c.launch.base_port);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(at + e.what());
  }
  for (const AllocatedPeer& p : a.peers) {
    c.peers.push_back(PeerEntry{p.rank, p.endpoint, 0, 1, {}, {}});
    c.node.exchange.peers.push_back({p.rank, p.endpoint});
    resolved.push_back(toml::table{{"id", static_cast<int64_t>(p.rank)}, {"endpoint", p.endpoint}});
  }
  c.allocation_rank = a.rank;
}

// Every key with its value, {section: {key: value}}, and the [[peer]] entries as "peer".
toml::table resolved_table(const std::vector<KeyValue>& values, const toml::table& root, toml::array peers) {
  const auto& schema = config_schema();
  toml::table out;
  for (std::size_t i = 0; i < schema.size(); ++i) {
    if (in_peer(schema[i])) continue;
    const auto [section, key] = split_key(schema[i].name);
    if (!out.contains(section)) out.insert(section, toml::table{});
    toml::table& table = *out[section].as_table();
    if (schema[i].type.kind != KeyKind::layers) put(table, schema[i], values[i]);
    else if (values[i].given) table.insert(key, *root[section][key].node());
  }
  if (!peers.empty()) out.insert("peer", std::move(peers));
  return out;
}

// The config of `root`; with `resolved`, also every key's value.
Config read(toml::table& root, const std::string& file, const std::vector<std::string>& overrides,
            const Environment& env, toml::table* resolved = nullptr) {
  const auto overridden = apply_overrides(root, overrides);
  check_sections(root, file);
  std::vector<KeyValue> values = read_sections(root, file, overridden);
  resolve_dependent_defaults(values);
  Config c;
  c.source = file;
  const auto& schema = config_schema();
  for (std::size_t i = 0; i < schema.size(); ++i)
    if (schema[i].apply && !in_peer(schema[i])) schema[i].apply(values[i], c);
  read_model(root, file, overridden, c.data, c.node.train.learner.model);
  toml::array peers;
  read_peers(root, file, c, peers);
  read_allocation(env, c, peers);
  move_across_keys(c);
  check_across_keys(values, c);
  check_model_memory(root, file, c);
  task_kind(c.data).configure(c);
  if (resolved) *resolved = resolved_table(values, root, std::move(peers));
  return c;
}

}  // namespace

Config parse_config(const std::string& text, const std::string& name, const std::vector<std::string>& overrides,
                    const Environment& env) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  return read(root, name, overrides, env);
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  toml::table root = parse_toml_file(path);
  return read(root, path, overrides, process_environment());
}

namespace {

// The shortest decimal that reads back as `x`.
std::string shortest(double x) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, x);
    if (std::strtod(text, nullptr) == x) break;
  }
  return text;
}

}  // namespace

std::string job_description(const std::string& path, const std::vector<std::string>& overrides) {
  toml::table root = parse_toml_file(path);
  toml::table resolved;
  read(root, path, overrides, process_environment(), &resolved);
  std::string out;
  for (const KeySpec& spec : config_schema()) {
    if (spec.per_peer) continue;
    const auto [section, key] = split_key(spec.name);
    const toml::node* value = resolved[section][key].node();
    if (!value) continue;  // a layer list left unset
    if (const auto* real = value->as_floating_point()) {  // 0.05, not toml++'s 0.050000000000000003
      out += spec.name + "=" + shortest(real->get()) + "\n";
      continue;
    }
    std::ostringstream text;
    text << toml::toml_formatter{toml::table{{key, *value}}};
    std::string line = text.str();  // "key = value", a layer list over several lines
    std::replace(line.begin(), line.end(), '\n', ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += section + "." + key + "=" + line.substr(line.find(" = ") + 3) + "\n";
  }
  return out;
}

std::string resolved_config(const std::string& path, const std::vector<std::string>& overrides, bool json) {
  toml::table root = parse_toml_file(path);
  toml::table resolved;
  read(root, path, overrides, process_environment(), &resolved);
  std::ostringstream out;
  if (json) out << toml::json_formatter{resolved};
  else out << toml::toml_formatter{resolved};
  return out.str();
}

}  // namespace starling::cli
