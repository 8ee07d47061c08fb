#include "cli/experiment_config.h"

#include "cli/section_reader.h"

#include <filesystem>
#include <regex>
#include <set>

namespace starling::cli {
namespace {

std::string where(const std::string& file, const toml::node& node) {
  return file + (node.source().begin.line > 0 ? ":" + std::to_string(node.source().begin.line) : "");
}

// A `set` table as "key=value" overrides: keys may be dotted strings ("exchange.mode") or
// nested tables (exchange.mode); values keep their TOML form, so strings stay strings.
void flatten(const toml::table& table, const std::string& prefix, const std::string& file, std::vector<std::string>& out) {
  for (const auto& [key, value] : table) {
    const std::string name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* nested = value.as_table()) {
      flatten(*nested, name, file, out);
      continue;
    }
    if (name.find('.') == std::string::npos)
      throw ConfigError(where(file, value) + ": set: \"" + name + "\": expected section.key");
    std::ostringstream text;
    if (value.is_string()) text << toml::value<std::string>(*value.value<std::string>());
    else if (const auto* array = value.as_array()) text << *array;
    else value.visit([&](const auto& v) { text << v; });
    out.push_back(name + "=" + text.str());
  }
}

std::vector<std::string> read_set(const toml::table& table, const std::string& section, const std::string& file) {
  std::vector<std::string> out;
  if (const toml::node* node = table.get("set")) {
    if (!node->as_table()) throw ConfigError(where(file, *node) + ": " + section + ".set: expected a table of overrides");
    flatten(*node->as_table(), "", file, out);
  }
  return out;
}

std::string resolve(const std::string& experiment_file, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(experiment_file).parent_path() / path).lexically_normal().string();
}

Variant read_variant(const toml::table& table, const ExperimentSpec& spec, const std::string& base,
                     const std::vector<std::string>& shared, double epochs) {
  const std::string& file = spec.source;
  SectionReader r(table, "variant", file);
  Variant v;
  v.name = r.text("name", "");
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.+-]*");
  if (!std::regex_match(v.name, kName))
    throw ConfigError(where(file, table) + ": variant.name: expected a name of letters, digits and _.+- (it names files)");
  v.system = r.choice("system", v.system, {"starling", "torch-ddp"});
  const std::string own_base = r.text("base", "");
  v.base = own_base.empty() ? base : resolve(file, own_base);
  v.repeat = static_cast<int>(r.integer("repeat", 1, 1, 100));
  const std::string network = r.text("network", "loopback");
  static const std::regex kNetns("netns:([0-9]+(bit|kbit|mbit|gbit))");
  std::smatch m;
  if (std::regex_match(network, m, kNetns)) v.network = m[1];
  else if (network != "loopback")
    throw ConfigError(where(file, table) + ": variant.network: expected \"loopback\" or \"netns:RATE\" (e.g. netns:100mbit), got \"" + network + "\"");
  v.overrides = shared;
  if (epochs > 0) v.overrides.push_back("run.epochs=" + std::to_string(epochs));
  if (spec.target_accuracy > 0) v.overrides.push_back("run.target_accuracy=" + std::to_string(spec.target_accuracy));
  const auto own = read_set(table, "variant", file);
  v.overrides.insert(v.overrides.end(), own.begin(), own.end());
  r.take_external("set");
  r.finish();
  if (v.base.empty()) throw ConfigError(where(file, table) + ": variant.base: variant '" + v.name + "' has no base config (set experiment.base)");
  try {
    v.config = load_config(v.base, v.overrides);
  } catch (const ConfigError& e) {
    throw ConfigError(where(file, table) + ": variant '" + v.name + "': " + e.what());
  }
  if (v.system == "torch-ddp" && !v.network.empty())
    throw ConfigError(where(file, table) + ": variant.network: torch-ddp variants run on loopback only");
  if (!v.network.empty() && v.config.node.exchange.mode == gossip::ExchangeMode::none)
    throw ConfigError(where(file, table) + ": variant.network: \"netns:" + v.network + "\" needs peers (an exchange mode other than none)");
  if (!v.network.empty() && v.config.launch.in_process)
    throw ConfigError(where(file, table) + ": variant.network: \"netns:" + v.network + "\" runs each peer as a process in a "
                      "namespace of its own: set \"launch.in_process\" = false");
  return v;
}

}  // namespace

ExperimentSpec load_experiment(const std::string& path) {
  toml::table root = parse_toml_file(path);
  ExperimentSpec spec;
  spec.source = path;
  for (const auto& [key, node] : root)
    if (key.str() != "experiment" && key.str() != "variant")
      throw ConfigError(where(path, node) + ": [" + std::string(key.str()) + "]: unknown section (expected [experiment] and [[variant]])");
  const toml::table empty;
  const toml::table* head = root["experiment"].as_table();
  if (root.get("experiment") && !head) throw ConfigError(where(path, *root.get("experiment")) + ": experiment: expected a table [experiment]");
  SectionReader e(head ? *head : empty, "experiment", path);
  spec.name = e.text("name", std::filesystem::path(path).stem().string());
  spec.description = e.text("description", "");
  const std::string base = e.text("base", "");
  spec.target_accuracy = e.number("target_accuracy", 0.0, 0.0, 1.0);
  const double epochs = e.number("epochs", 0.0, 0.0, 1e6);
  spec.baseline = e.text("baseline", "");
  const auto shared = head ? read_set(*head, "experiment", path) : std::vector<std::string>{};
  e.take_external("set");
  e.finish();

  const toml::array* list = root["variant"].as_array();
  if (!list || list->empty() || !list->is_array_of_tables())
    throw ConfigError(path + ": variant: expected one or more [[variant]] tables");
  std::set<std::string> names;
  for (const auto& item : *list) {
    spec.variants.push_back(read_variant(*item.as_table(), spec, resolve(path, base), shared, epochs));
    if (!names.insert(spec.variants.back().name).second)
      throw ConfigError(where(path, item) + ": variant.name: \"" + spec.variants.back().name + "\" appears twice");
  }
  if (spec.baseline.empty()) spec.baseline = spec.variants.front().name;
  if (!names.count(spec.baseline))
    throw ConfigError(path + ": experiment.baseline: no variant named \"" + spec.baseline + "\"");
  return spec;
}

}  // namespace starling::cli
