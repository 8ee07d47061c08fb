#include "cli/simulate_command.h"

#include "cli/config.h"
#include "cli/simulate_report.h"
#include "simulator/network.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <set>
#include <thread>

namespace starling::cli {

using job::write_file_atomic;

namespace {

using simulator::SpecError;

int parse_count(const std::string& text) {
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw SpecError("--peers: '" + text + "' is not a number of peers");
  if (n < 1 || n > 1024) throw SpecError("--peers: " + text + " is outside 1..1024");
  return n;
}

// The config as `starling launch` would read it. One without [[peer]] entries (a single-node
// config) gets two placeholders, so that `--set exchange.mode=...` validates as for a job:
// the simulator chooses its own peer counts anyway.
Config load_for_simulation(const SimulateOptions& o) {
  std::ifstream in(o.config);
  if (!in) return load_config(o.config, o.overrides);  // its error names the file
  std::stringstream text;
  text << in.rdbuf();
  std::string toml = text.str();
  const bool placeholders = toml.find("[[peer]]") == std::string::npos;
  if (placeholders)
    toml += "\n[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:1\"\n[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:2\"\n";
  Config c = parse_config(toml, o.config, o.overrides);
  if (placeholders) c.peers.clear();
  return c;
}

simulator::Workload workload_from(const Config& c) {
  simulator::Workload w;
  const auto& learner = c.node.train.learner;
  if (c.node.exchange.mode == gossip::ExchangeMode::none)
    throw ConfigError(c.source + ": exchange.mode: \"none\" trains one node; set the mode to simulate (e.g. --set exchange.mode=\"allreduce\")");
  w.model = learner.model.kind;
  w.parameters = static_cast<double>(Model(learner.model).param_count());
  w.batch = learner.batch;
  w.learners = std::max(1, c.node.learners);  // auto-tuning: its first learner
  w.kernel_threads = std::max(1, c.kernel_threads);
  w.mode = c.node.exchange.mode;
  w.period = c.node.period;
  w.topology = c.node.exchange.topology;
  w.topology_options.random_degree = c.node.exchange.random_degree;
  w.topology_options.seed = c.node.exchange.seed;
  // Without the data the clique size 0 cannot become the classes: Fashion-MNIST's 10.
  w.topology_options.clique_size = c.node.exchange.clique_size > 0 ? c.node.exchange.clique_size : 10;
  w.topology_options.inter_clique = c.node.exchange.inter_clique;
  w.codec = c.node.exchange.codec;
  w.max_staleness = c.node.exchange.max_staleness;
  w.epoch_samples = c.data.dataset == "synthetic" ? c.data.synthetic_train : 60000;
  w.heartbeat_seconds = std::chrono::duration<double>(c.node.exchange.heartbeat).count();
  return w;
}

// The peers-per-host values whose crowded-host latency the model needs (2..16; beyond 16
// it extrapolates from 16).
std::set<int> crowded_sizes(const SimulationReport& r, const std::vector<int>& counts) {
  std::set<int> sizes;
  for (int p : counts) {
    simulator::Cluster c = r.cluster;
    c.peers = p;
    const int q = std::min(p, simulator::peers_per_host(c));
    if (q >= 2) sizes.insert(std::min(q, 16));
  }
  return sizes;
}

// Learner threads stepping at once on the most crowded host of the sweep, as many as this
// machine can run side by side.
int shared_concurrency(const SimulationReport& r, const std::vector<int>& counts) {
  int most = 1;
  for (int p : counts) {
    simulator::Cluster c = r.cluster;
    c.peers = p;
    const int q = std::min(p, simulator::peers_per_host(c));
    most = std::max(most, q * r.work.learners * r.work.kernel_threads);
  }
  return std::min({most, r.this_machine_cores, simulator::cores_per_host(r.work, r.cluster, r.this_machine_cores)});
}

// Each of the sweep's peer counts up to 16 whose peers all share a host like this machine
// (loopback; --hosts 1 with this machine's cores): that many peers training together here
// for about a second (warm-up and start-up aside).
void measure_host_rounds(SimulationReport& r, const Config& config, const std::vector<int>& counts) {
  auto& m = r.measured;
  simulator::HostRound probe;
  probe.exchange = config.node.exchange;
  probe.learner = config.node.train.learner;
  probe.train_samples = static_cast<std::uint32_t>(r.work.epoch_samples);
  probe.learners = r.work.learners;
  probe.period = std::max(1, r.work.period);
  for (int p : counts) {
    simulator::Cluster c = r.cluster;
    c.peers = p;
    if (p < 2 || p > 16 || !simulator::host_is_this_machine(r.work, c, r.this_machine_cores)) continue;
    probe.peers = p;
    const double share = std::max(1.0, static_cast<double>(p) * r.work.learners * r.work.kernel_threads / r.this_machine_cores);
    const double guess = probe.period * std::max(m.shared_step_seconds, m.step_seconds) * share + 1e-3 * p;
    probe.rounds = std::clamp(static_cast<int>(1.0 / guess), 5, 200);
    try {
      m.host_round_seconds[p] = simulator::measure_host_round_seconds(probe);
    } catch (const std::exception& e) {
      spdlog::warn("{} peers could not train together here ({}); their exchange is the link model's", p, e.what());
    }
  }
}

void measure(SimulationReport& r, const Config& config, const std::vector<int>& counts) {
  auto& m = r.measured;
  const auto& learner = config.node.train.learner;
  m.step_seconds = simulator::measure_step_seconds(learner, r.work.kernel_threads);
  m.shared_concurrency = shared_concurrency(r, counts);
  if (m.shared_concurrency > 1)
    m.shared_step_seconds = simulator::measure_step_seconds(learner, r.work.kernel_threads, m.shared_concurrency);
  m.handoff_seconds = simulator::measure_handoff_seconds();
  m.add_seconds_per_element = simulator::measure_add_seconds_per_element(static_cast<std::size_t>(r.work.parameters));
  if (r.work.codec != "none")
    m.codec = simulator::measure_codec(r.work.codec, config.node.exchange.codec_options, static_cast<std::size_t>(r.work.parameters));
  m.loopback = simulator::measure_loopback();
  measure_host_rounds(r, config, counts);
  // Over loopback a measured host round replaces the link model: where it covered every
  // peer count (2 to 16), the crowded probes would go unused. A slower link still uses them.
  const bool all_measured = std::all_of(counts.begin(), counts.end(), [&](int p) {
    return p < 2 || m.host_round_seconds.count(p) > 0;
  });
  if (r.cluster.network.loopback && all_measured) return;
  constexpr std::size_t kBulk = 1 << 20;  // the all-reduce's segment
  for (int q : crowded_sizes(r, counts)) {
    m.crowded_latency[q] = simulator::measure_ring_step_seconds(q);
    if (r.cluster.network.loopback)
      m.crowded_seconds_per_byte[q] =
          std::max(0.0, simulator::measure_ring_step_seconds(q, kBulk) - m.crowded_latency[q]) / kBulk;
  }
}

}  // namespace

std::vector<int> parse_peer_counts(const std::string& text) {
  std::vector<int> counts;
  const auto dash = text.find('-');
  if (dash != std::string::npos && text.find(',') == std::string::npos) {
    const int lo = parse_count(text.substr(0, dash)), hi = parse_count(text.substr(dash + 1));
    for (int p = lo; p <= hi; p *= 2) counts.push_back(p);
    if (counts.empty() || counts.back() != hi) counts.push_back(hi);
    return counts;
  }
  std::size_t from = 0;
  for (;;) {
    const auto comma = text.find(',', from);
    counts.push_back(parse_count(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from)));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return counts;
}

int run_simulate(const SimulateOptions& options) {
  SimulationReport r;
  Config config;
  std::vector<int> counts;
  try {
    config = load_for_simulation(options);
    r.work = workload_from(config);
    r.cluster.network = simulator::parse_network(options.network);
    r.cluster.stragglers = simulator::parse_stragglers(options.straggler);
    if (options.hosts < 0 || options.cores_per_host < 0) throw SpecError("--hosts and --cores-per-host must be positive");
    r.cluster.hosts = options.hosts, r.cluster.cores_per_host = options.cores_per_host;
    r.this_machine_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (options.peers.empty() && config.peers.empty())
      throw SpecError("--peers: " + options.config + " lists no [[peer]]; give --peers N");
    counts = options.peers.empty() ? std::vector<int>{static_cast<int>(config.peers.size())} : parse_peer_counts(options.peers);
  } catch (const std::exception& e) {  // ConfigError, SpecError
    spdlog::error("{}", e.what());
    return 2;
  }
  r.run = config.run.name, r.config = options.config, r.straggler_text = options.straggler;
  spdlog::info("measuring this machine: a {} step at batch {}, the loopback link{}", r.work.model, r.work.batch,
               r.work.codec != "none" ? ", the " + r.work.codec + " codec" : std::string());
  try {
    measure(r, config, counts);
    for (int p : counts) {
      r.cluster.peers = p;
      r.rows.push_back(simulator::predict(r.work, r.measured, r.cluster, r.this_machine_cores));
    }
    std::fputs(report_text(r).c_str(), stdout);
    if (!options.json.empty()) write_file_atomic(options.json, report_json(r).str() + "\n");
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}

}  // namespace starling::cli
