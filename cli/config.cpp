#include "cli/config.h"
#include "cli/model_config.h"
#include "cli/section_reader.h"

#include <toml++/toml.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

namespace starling::cli {
namespace {

constexpr double kInf = std::numeric_limits<double>::max();

// A folder named in the config is relative to the config file, so a job folder carries its
// keys and checkpoints wherever it is run from; empty stays empty.
std::string relative_to_config(const std::string& dir, const std::string& file) {
  if (dir.empty() || std::filesystem::path(dir).is_absolute() || file.find('/') == std::string::npos) return dir;
  return (std::filesystem::path(file).parent_path() / dir).string();
}
const std::vector<std::string> kSections{"run", "data", "model", "optimizer", "kernels", "node", "exchange", "compression", "security", "peer"};

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

// [node] learners is a count or "auto" (Crossbow's auto-tuning).
void read_node(SectionReader&& node, actors::NodeSpec& spec) {
  if (node.is_text("learners")) {
    node.choice("learners", "auto", {"auto"});
    spec.learners = 0;
  } else {
    spec.learners = static_cast<int>(node.integer("learners", 1, 1, 256));
  }
  actors::parse_intra_sync(node.choice("intra_sync", "sma", {"sma", "average", "none"}), spec.intra_sync);
  spec.alpha = node.number("alpha", 0.0, 0.0, 1.0);
  spec.momentum = node.number("momentum", 0.0, 0.0, 0.999);
  spec.sync_every = static_cast<int>(node.integer("sync_every", 1, 1, 1000000));
  spec.threads = static_cast<int>(node.integer("threads", 0, 0, 1024));
  spec.autotune_threshold = node.number("autotune_threshold", 0.1, 0.0, 10.0);
  spec.max_learners = static_cast<int>(node.integer("max_learners", 16, 1, 256));
  node.finish();
}

// [data] partition, alpha, classes_per_peer. classes_per_peer's upper bound (the dataset's
// classes) and whether every peer gets data are checked once the labels are loaded.
void read_partition(SectionReader& data, Config& c) {
  auto& spec = c.data.partition;
  spec.kind = parse_partition(data.choice("partition", "iid", {"iid", "dirichlet", "shards", "by-class"}));
  spec.alpha = data.number("alpha", spec.alpha, 0.0, kInf, true);
  spec.classes_per_peer = static_cast<int>(data.integer("classes_per_peer", spec.classes_per_peer, 1, 256));
  spec.seed = partition_seed(c.run.seed);
  c.data.partition_at = data.where("partition");
  c.data.alpha_at = data.where("alpha");
  c.data.classes_per_peer_at = data.where("classes_per_peer");
}

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

// [exchange]'s keys for peers that die, join, stall or flood: failure detection, the start,
// the floor on live peers and the caps on what one peer may send.
void read_faults(SectionReader& ex, Config& c) {
  auto& spec = c.node.exchange;
  spec.heartbeat = millis(ex.number("heartbeat_seconds", 0.5, 0.0, 60.0, true));
  spec.failure_timeout = millis(ex.number("failure_timeout_seconds", 5.0, 0.0, 3600.0, true));
  spec.start_timeout = millis(ex.number("start_timeout_seconds", 30.0, 0.0, 86400.0, true));
  spec.min_peers = static_cast<int>(ex.integer("min_peers", 0, 0, 100000));
  spec.max_message_bytes = static_cast<uint32_t>(std::llround(ex.number("max_message_mb", 16.0, 0.0, 2048.0, true) * 1048576.0));
  spec.max_messages_per_second = static_cast<uint32_t>(ex.integer("max_receive_rate", 50000, 0, 100000000));
  if (spec.failure_timeout <= spec.heartbeat)
    throw ConfigError(c.source + ": exchange.failure_timeout_seconds: must be longer than exchange.heartbeat_seconds");
}

// [exchange]: how peers mix their models; needs the [[peer]] list.
void read_exchange(SectionReader&& ex, Config& c) {
  auto& spec = c.node.exchange;
  gossip::parse_exchange_mode(ex.choice("mode", "none", {"none", "allreduce", "gossip", "local-sgd", "async-gossip", "gradient-tracking"}), spec.mode);
  spec.topology = ex.choice("topology", "ring", {"ring", "torus", "exponential", "one-peer-exponential", "complete", "random"});
  spec.random_degree = static_cast<int>(ex.integer("random_degree", 3, 1, 1024));
  c.node.period = static_cast<int>(ex.integer("period", spec.mode == gossip::ExchangeMode::local_sgd ? 10 : 1, 1, 1000000));
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(ex.number("timeout_seconds", 60.0, 0.0, 86400.0, true) * 1000));
  spec.gamma = ex.number("gamma", 0.5, 0.0, 1.0, true);
  // QG-DSGDm replaces the local momentum, which non-IID data would make each peer's own.
  spec.quasi_global_momentum = ex.number("quasi_global_momentum", 0.0, 0.0, 0.999999);
  if (spec.quasi_global_momentum > 0.0 && spec.mode != gossip::ExchangeMode::gossip)
    ex.reject("quasi_global_momentum", "0 unless exchange.mode = \"gossip\" (D-PSGD's momentum)");
  const auto& optimizer = c.node.train.learner.optimizer;
  if (spec.quasi_global_momentum > 0.0 && optimizer.kind == "sgd" && optimizer.momentum > 0.0)
    ex.reject("quasi_global_momentum", "0 while optimizer.momentum > 0 (it replaces the local momentum: set that to 0)");
  spec.max_staleness = static_cast<uint64_t>(ex.integer("max_staleness", 4, 0, 1000000));
  spec.staleness_scaling = ex.boolean("staleness_scaling", false);
  // Opt-in: a mix one exchange late can cost local SGD accuracy (and, at long periods with
  // heavy momentum, stability) for little wall time on a host whose cores the compute
  // already fills (README, Failure behaviour).
  // Async gossip has no barrier to hide.
  c.node.overlap = ex.boolean("overlap", false);
  if (c.node.overlap && spec.mode == gossip::ExchangeMode::async_gossip)
    ex.reject("overlap", "false with exchange.mode = \"async-gossip\", which is asynchronous already");
  // Their local change is measured from the model the last round returned, which the overlap moves.
  if (c.node.overlap && (spec.mode == gossip::ExchangeMode::gradient_tracking || spec.quasi_global_momentum > 0.0))
    ex.reject("overlap", "false with exchange.mode = \"gradient-tracking\" or exchange.quasi_global_momentum > 0, which need the mixed model back");
  read_faults(ex, c);
  ex.finish();
}

// [compression]: the codec of compressed gossip (CHOCO-SGD) or the compressed all-reduce.
void read_compression(SectionReader&& cz, Config& c) {
  auto& spec = c.node.exchange;
  spec.codec = cz.choice("codec", "none", {"none", "fp16", "bf16", "threshold", "topk", "qsgd", "sign", "powersgd"});
  spec.codec_options.density = cz.number("density", 0.01, 0.0, 1.0, true);
  spec.codec_options.bits = static_cast<int>(cz.integer("bits", 8, 2, 8));
  spec.codec_options.rank = static_cast<int>(cz.integer("rank", 1, 1, 64));
  spec.codec_options.tau = static_cast<float>(cz.number("tau", 1e-4, 1e-12, 1e6));
  spec.codec_options.clip = static_cast<float>(cz.number("clip", 0.0, 0.0, 1e6));
  spec.adaptive = cz.boolean("adaptive", false);
  spec.adaptive_options.min_density = cz.number("min_density", 1e-4, 0.0, 1.0, true);
  spec.adaptive_options.max_density = cz.number("max_density", 1.0, 0.0, 1.0, true);
  // The tracker's mean must stay the mean local change exactly: no lossy codec on it.
  if (spec.codec != "none" && spec.mode == gossip::ExchangeMode::gradient_tracking)
    cz.reject("codec", "\"none\" with exchange.mode = \"gradient-tracking\" (model and tracker travel uncompressed)");
  if (spec.codec != "none" && spec.quasi_global_momentum > 0.0)
    cz.reject("codec", "\"none\" with exchange.quasi_global_momentum > 0 (CHOCO-SGD has no quasi-global momentum)");
  cz.finish();
  if (spec.adaptive && spec.codec != "topk" && spec.codec != "threshold")
    throw ConfigError(c.source + ": compression.adaptive: needs a codec with a density (\"topk\" or \"threshold\")");
  if (spec.adaptive_options.min_density > spec.adaptive_options.max_density)
    throw ConfigError(c.source + ": compression.min_density: above compression.max_density");
  if (spec.codec != "none" && (spec.mode == gossip::ExchangeMode::none || spec.mode == gossip::ExchangeMode::async_gossip))
    throw ConfigError(c.source + ": compression.codec: \"" + spec.codec + "\" works with exchange.mode = \"gossip\" (CHOCO-SGD), \"allreduce\" or \"local-sgd\" (compressed all-reduce); codecs in async gossip are not built yet");
}

// [[peer]] id, endpoint, learners: every peer of the job, in ring order.
void read_peers(const toml::table& root, const std::string& file, Config& c) {
  const toml::node* node = root.get("peer");
  if (!node) return;
  const toml::array* list = node->as_array();
  auto where = [&](const toml::node& n) {
    return file + (n.source().begin.line > 0 ? ":" + std::to_string(n.source().begin.line) : "");
  };
  if (!list || !list->is_array_of_tables()) throw ConfigError(where(*node) + ": peer: expected [[peer]] tables");
  std::set<uint32_t> ids;
  for (const auto& item : *list) {
    const toml::table& t = *item.as_table();
    PeerEntry peer;
    for (const auto& [key, value] : t) {
      const std::string k(key.str());
      if (k == "id" && value.is_integer() && *value.value<int64_t>() >= 0 && *value.value<int64_t>() < (int64_t{1} << 31))
        peer.id = static_cast<uint32_t>(*value.value<int64_t>());
      else if (k == "endpoint" && value.is_string() && value.value<std::string>()->rfind("tcp://", 0) == 0)
        peer.endpoint = *value.value<std::string>();
      else if (k == "learners" && value.is_integer() && *value.value<int64_t>() >= 1 && *value.value<int64_t>() <= 256)
        peer.learners = static_cast<int>(*value.value<int64_t>());
      else if (k == "id" || k == "endpoint" || k == "learners")
        throw ConfigError(where(value) + ": peer." + k + ": expected " +
                          (k == "id" ? "an integer in [0, 2^31)" : k == "endpoint" ? "a tcp://host:port string" : "an integer in [1, 256]"));
      else
        throw ConfigError(where(value) + ": peer." + k + ": no such key in [[peer]] (expected id, endpoint, learners)");
    }
    if (peer.endpoint.empty()) throw ConfigError(where(item) + ": peer.endpoint: expected a tcp://host:port string");
    if (!t.contains("id")) throw ConfigError(where(item) + ": peer.id: missing");
    if (!ids.insert(peer.id).second) throw ConfigError(where(item) + ": peer.id: " + std::to_string(peer.id) + " appears twice");
    c.peers.push_back(peer);
  }
  for (const auto& peer : c.peers) c.node.exchange.peers.push_back({peer.id, peer.endpoint});
}

Config read(toml::table& root, const std::string& file, const std::vector<std::string>& overrides) {
  const auto overridden = apply_overrides(root, overrides);
  for (const auto& [key, node] : root)
    if (std::find(kSections.begin(), kSections.end(), std::string(key.str())) == kSections.end()) {
      std::string where = file + (node.source().begin.line > 0 ? ":" + std::to_string(node.source().begin.line) : "");
      throw ConfigError(where + ": [" + std::string(key.str()) + "]: unknown section (expected one of run, data, model, optimizer, kernels, node, exchange, compression, security, peer)");
    }

  Config c;
  c.source = file;
  SectionReader run(root, "run", file, overridden);
  c.run.name = run.text("name", c.run.name);
  c.run.seed = static_cast<uint64_t>(run.integer("seed", 1, 0, std::numeric_limits<int64_t>::max()));
  c.run.epochs = run.number("epochs", 1.0, 0.0, 1e6, true);
  c.run.target_accuracy = run.number("target_accuracy", 0.0, 0.0, 1.0);
  c.run.eval_every = run.number("eval_every", 1.0, 0.0, 1e6, true);
  c.run.data_dir = run.text("data_dir", "");
  c.run.out_dir = run.text("out_dir", c.run.out_dir);
  c.node.checkpoint_dir = relative_to_config(run.text("checkpoint_dir", ""), file);
  c.node.checkpoint_every = run.integer("checkpoint_every", 0, 0, std::numeric_limits<int64_t>::max());
  c.node.checkpoint_keep = static_cast<int>(run.integer("checkpoint_keep", 3, 1, 1000));
  run.finish();
  if (c.node.checkpoint_every > 0 && c.node.checkpoint_dir.empty())
    throw ConfigError(file + ": run.checkpoint_every: needs run.checkpoint_dir");

  SectionReader data(root, "data", file, overridden);
  c.data.dataset = data.choice("dataset", c.data.dataset, {"fashion-mnist", "idx", "cifar10", "synthetic"});
  c.data.path = relative_to_config(data.text("path", ""), file);
  if (c.data.path.empty() && (c.data.dataset == "idx" || c.data.dataset == "cifar10"))
    data.reject("path", "the folder of the data.dataset = \"" + c.data.dataset + "\" files");
  c.data.synthetic_train = static_cast<int>(data.integer("synthetic_train", c.data.synthetic_train, 10, 10000000));
  c.data.synthetic_test = static_cast<int>(data.integer("synthetic_test", c.data.synthetic_test, 10, 10000000));
  read_partition(data, c);
  data.finish();

  TrainSpec& t = c.node.train;
  read_model(root, file, overridden, c.data, t.learner.model);

  SectionReader opt(root, "optimizer", file, overridden);
  t.learner.optimizer.kind = opt.choice("kind", "sgd", {"sgd", "adam"});
  t.schedule.lr = opt.number("lr", 0.05, 0.0, 1e3, true);
  t.learner.optimizer.momentum = opt.number("momentum", 0.9, 0.0, 0.999999);
  t.learner.optimizer.nesterov = opt.boolean("nesterov", false);
  t.learner.optimizer.weight_decay = opt.number("weight_decay", 0.0, 0.0, 1.0);
  t.learner.optimizer.beta1 = opt.number("beta1", 0.9, 0.0, 0.999999);
  t.learner.optimizer.beta2 = opt.number("beta2", 0.999, 0.0, 0.99999999);
  t.learner.batch = static_cast<int>(opt.integer("batch", 32, 1, 65536));
  t.schedule.kind = opt.choice("schedule", "constant", {"constant", "step", "cosine"});
  t.schedule.warmup_steps = opt.integer("warmup_steps", 0, 0, std::numeric_limits<int32_t>::max());
  t.schedule.step_epochs = opt.number("step_epochs", 1.0, 0.0, kInf, true);
  t.schedule.gamma = opt.number("gamma", 0.1, 0.0, 1.0, true);
  opt.finish();

  SectionReader kern(root, "kernels", file, overridden);
  const std::string backend = kern.choice("backend", "native", {"native", "onednn"});
  kernels::parse_backend(backend, t.learner.backend);
  c.kernel_threads = static_cast<int>(kern.integer("threads", 1, 1, 1024));
  kern.finish();

  read_node(SectionReader(root, "node", file, overridden), c.node);
  read_exchange(SectionReader(root, "exchange", file, overridden), c);
  c.source = file;
  read_compression(SectionReader(root, "compression", file, overridden), c);
  read_peers(root, file, c);
  SectionReader security(root, "security", file, overridden);
  if (security.boolean("curve", false)) {
    c.node.exchange.keys_dir = relative_to_config(security.text("keys_dir", "keys"), file);
  } else {
    security.text("keys_dir", "");
  }
  security.finish();
  if (c.node.exchange.min_peers > static_cast<int>(c.peers.size()))
    throw ConfigError(file + ": exchange.min_peers: " + std::to_string(c.node.exchange.min_peers) + " is more than the " +
                      std::to_string(c.peers.size()) + " [[peer]] entries");
  if (c.node.exchange.mode != gossip::ExchangeMode::none) {
    if (c.peers.size() < 2) throw ConfigError(file + ": exchange.mode: \"" + std::string(gossip::exchange_mode_name(c.node.exchange.mode)) + "\" needs at least two [[peer]] entries");
    if (c.node.learners == 0) throw ConfigError(file + ": node.learners: \"auto\" is not available with an exchange between peers (every peer must run the same number of iterations)");
  }
  for (const auto& peer : c.peers)
    if (peer.learners != 0 && peer.learners != c.peers.front().learners)
      throw ConfigError(file + ": peer.learners: every peer needs the same learner count (they run the same number of iterations)");
  c.node.exchange.seed = c.run.seed;

  t.learner.seed = c.run.seed;
  t.epochs = c.run.epochs;
  t.eval_every = c.run.eval_every;
  t.target_accuracy = c.run.target_accuracy;
  return c;
}

}  // namespace

Config parse_config(const std::string& text, const std::string& name, const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  return read(root, name, overrides);
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  toml::table root = parse_toml_file(path);
  return read(root, path, overrides);
}

}  // namespace starling::cli
