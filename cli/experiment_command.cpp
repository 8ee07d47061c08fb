#include "cli/experiment_command.h"

#include "cli/experiment_config.h"
#include "cli/experiment_report.h"
#include "cli/launch_command.h"
#include "cli/process.h"
#include "cli/train_command.h"
#include "job/data_partition.h"
#include "job/progress.h"
#include "job/task_kind.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace starling::cli {

using job::format_duration;
using job::ProgressLine;
using job::TaskKind;
using job::task_kind;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char* const kPython = "/usr/bin/python3";
// Where scripts/plot.py names the figures it drew, one a line: which ones depends on the
// experiment (accuracy or bits per byte, exchanges, labels), and plot.py alone decides.
const char* const kPlotManifest = "plots.txt";

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

int peer_count(const Config& c) {
  return c.node.exchange.mode == gossip::ExchangeMode::none ? 1 : static_cast<int>(c.peers.size());
}

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) out += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
  return out + "\"";
}

std::string run_dir(const std::string& out, const Variant& v, int repeat) {
  return out + "/runs/" + v.name + (v.repeat > 1 ? "-r" + std::to_string(repeat) : "");
}

std::string summary_path(const Variant& v, const std::string& dir) {
  return dir + "/" + (v.system == "torch-ddp" ? v.name + ".summary.json" : std::string("summary.json"));
}

// The command line of one run of a variant; repeats after the first shift the seed.
std::vector<std::string> command_of(const Variant& v, int repeat, const std::string& dir, const ExperimentOptions& o) {
  std::vector<std::string> args;
  std::vector<std::string> sets = v.overrides;
  if (repeat > 0) sets.push_back("run.seed=" + std::to_string(v.config.run.seed + static_cast<uint64_t>(repeat)));
  if (v.system == "torch-ddp") {
    args = {kPython, starling_home() + "/bench/torch_ddp.py", "--config", v.base, "--procs",
            std::to_string(peer_count(v.config)), "--out-dir", dir, "--name", v.name, "--starling", o.executable};
  } else {
    const bool alone = v.config.node.exchange.mode == gossip::ExchangeMode::none;
    args = {o.executable, alone ? "train" : "launch", "--config", v.base, "--summary", summary_path(v, dir)};
    if (!v.network.empty()) args.push_back("--netns");
    sets.push_back("run.out_dir=" + toml_string(dir));
    sets.push_back("run.name=" + toml_string(v.name));
  }
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  return args;
}

// Runs a short helper (netns.sh, plot.py) to completion, its output appended to `log_fd`.
bool run_quietly(const std::vector<std::string>& args, int log_fd) {
  int status = 0;
  const pid_t pid = spawn_process(args, log_fd);
  ::waitpid(pid, &status, 0);
  return exit_code(status) == 0;
}

// What a run's progress line reads from its per-peer CSVs: how far the slowest peer is
// (epochs, or samples for a language model) and the latest mean of its quality column.
struct ProgressColumns {
  const char* position;
  const char* quality;
};
ProgressColumns progress_columns(const Variant& v) {
  const TaskKind& kind = task_kind(v.config.data);
  return {kind.position_column(), kind.quality_column()};
}
// A run's length in the position column's unit.
double run_length(const Variant& v) { return task_kind(v.config.data).run_length(v.config); }

// The cells of one CSV line.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

// The slowest peer's position and the mean of the peers' latest quality values, found by
// the columns' names in each CSV's header.
std::pair<double, double> progress_of(const std::string& dir, const ProgressColumns& columns) {
  double position = -1, quality = 0;
  int files = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().string().find(".metrics.csv") == std::string::npos) continue;
    std::ifstream in(entry.path());
    std::string header, line, last;
    std::getline(in, header);
    while (std::getline(in, line))
      if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) last = line;
    const std::vector<std::string> names = cells_of(header), cells = cells_of(last);
    const auto at = [&](const char* name) {
      const auto it = std::find(names.begin(), names.end(), name);
      const auto i = static_cast<std::size_t>(it - names.begin());
      return it != names.end() && i < cells.size() ? std::atof(cells[i].c_str()) : 0.0;
    };
    position = position < 0 ? at(columns.position) : std::min(position, at(columns.position));
    quality += at(columns.quality), ++files;
  }
  return {std::max(0.0, position), files ? quality / files : 0.0};
}

// Sizes the ETA: the runs' lengths (epochs, or steps), and how much of them is done.
struct Budget {
  double total = 0, done = 0;
  Clock::time_point start = Clock::now();
  std::string eta(double current) const {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double finished = done + current;
    return finished > 0 ? format_duration(elapsed / finished * (total - finished)) : std::string("?");
  }
};

RunOutcome run_variant_once(const Variant& v, int repeat, int index, int count, const ExperimentOptions& o,
                            Budget& budget) {
  RunOutcome run;
  run.repeat = repeat;
  run.dir = run_dir(o.out, v, repeat);
  fs::remove_all(run.dir);
  fs::create_directories(run.dir);
  const int log = ::open((run.dir + "/log.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error(run.dir + "/log.txt: cannot write");
  const std::string peers = std::to_string(peer_count(v.config));
  const std::string netns = starling_home() + "/scripts/netns.sh";
  if (!v.network.empty() && !run_quietly({"/bin/bash", netns, "up", peers, v.network}, log)) {
    spdlog::error("variant {}: scripts/netns.sh up {} {} failed; see {}/log.txt", v.name, peers, v.network, run.dir);
    ::close(log);
    return run;
  }
  const auto args = command_of(v, repeat, run.dir, o);
  const pid_t pid = spawn_process(args, log);
  ProgressLine line("[experiment " + std::to_string(index) + "/" + std::to_string(count) + "] " + v.name +
                    (v.repeat > 1 ? " #" + std::to_string(repeat + 1) : ""));
  int status = 0;
  bool stopping = false;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (g_interrupted && !stopping) ::kill(pid, SIGTERM), stopping = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const ProgressColumns columns = progress_columns(v);
    const auto [position, quality] = progress_of(run.dir, columns);
    char text[160];
    std::snprintf(text, sizeof text, "  %s %.6g/%.6g  %s %.4f  experiment ETA %s", columns.position, position,
                  run_length(v), columns.quality, quality, budget.eta(position).c_str());
    line.show(text);
  }
  line.clear();
  if (!v.network.empty()) run_quietly({"/bin/bash", netns, "down", peers}, log);
  ::close(log);
  budget.done += run_length(v);
  run.ok = exit_code(status) == 0;
  std::ifstream in(summary_path(v, run.dir));
  std::stringstream text;
  text << in.rdbuf();
  run.summary = run.ok ? text.str() : std::string();
  if (!run.ok) spdlog::error("variant {} failed (exit {}); its output is in {}/log.txt", v.name, exit_code(status), run.dir);
  return run;
}

// DIR/metrics.csv: every run's per-peer CSV, in long format behind variant, repeat, system, peer.
void merge_metrics(const std::vector<VariantOutcome>& outcomes, const std::string& out) {
  if (outcomes.empty()) return;
  const std::string columns = task_kind(outcomes.front().variant->config.data).metrics_columns();
  std::ofstream csv(out + "/metrics.csv");
  csv << "variant,repeat,system,peer," << columns << "\n";
  static const std::regex kPeer(R"(-peer(\d+)\.metrics\.csv$)");
  for (const auto& o : outcomes)
    for (const auto& run : o.runs) {
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(run.dir, ec)) {
        const std::string path = entry.path().string();
        if (path.find(".metrics.csv") == std::string::npos) continue;
        std::smatch m;
        const std::string peer = std::regex_search(path, m, kPeer) ? m[1].str() : "0";
        std::ifstream in(path);
        std::string line;
        if (!std::getline(in, line) || line != columns) {
          spdlog::warn("{}: unexpected columns; left out of metrics.csv", path);
          continue;
        }
        while (std::getline(in, line))
          if (!line.empty())
            csv << o.variant->name << "," << run.repeat << "," << o.variant->system << "," << peer << "," << line << "\n";
      }
    }
}

// The figures scripts/plot.py drew into `out`, as its manifest names them; none when it failed.
std::vector<std::string> draw_plots(const std::string& out) {
  const std::string manifest = out + "/" + kPlotManifest;
  ::unlink(manifest.c_str());  // a stale one from an earlier run must not be linked
  const int log = ::open((out + "/plot.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const bool ok = run_quietly({kPython, starling_home() + "/scripts/plot.py", out}, log);
  ::close(log);
  std::vector<std::string> plots;
  std::ifstream in(manifest);
  for (std::string name; ok && std::getline(in, name);)
    if (!name.empty() && ::access((out + "/" + name).c_str(), R_OK) == 0) plots.push_back(name);
  if (!ok) spdlog::warn("scripts/plot.py failed (it needs Debian's python3-matplotlib); see {}/plot.log", out);
  return plots;
}

bool has_iproute() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"})
    if (::access(path, X_OK) == 0) return true;
  return false;
}

// Everything a variant needs that is not in its config: root for namespaces, PyTorch.
void check_prerequisites(const ExperimentSpec& spec) {
  for (const auto& v : spec.variants) {
    if (!v.network.empty() && (::geteuid() != 0 || !has_iproute()))
      throw ConfigError(spec.source + ": variant '" + v.name + "': network = \"netns:" + v.network +
                        "\" runs its peers in network namespaces, which needs root and iproute2 (ip, tc); run as root or remove the variant");
    if (v.system == "torch-ddp" && (::access(kPython, X_OK) != 0 || ::access((starling_home() + "/bench/torch_ddp.py").c_str(), R_OK) != 0))
      throw ConfigError(spec.source + ": variant '" + v.name + "': system = \"torch-ddp\" needs " + kPython +
                        " (Debian's python3-torch) and " + starling_home() + "/bench/torch_ddp.py (set STARLING_HOME to the source tree)");
  }
}

// A partition that leaves some peer without data in some repeat (each has its own seed) is a
// config error before anything runs; image data that cannot be loaded is left to the run to report.
void check_partitions(const ExperimentSpec& spec) {
  for (const auto& v : spec.variants) {
    if (v.config.data.partition.kind == PartitionKind::iid) continue;
    for (int r = 0; r < v.repeat; ++r) {
      Config c = v.config;
      c.run.seed += static_cast<uint64_t>(r);
      c.data.partition.seed = partition_seed(c.run.seed);
      try {
        task_kind(c.data).check_split(c, true);
      } catch (const ConfigError& e) {
        throw ConfigError(spec.source + ": variant '" + v.name + "' (run.seed " + std::to_string(c.run.seed) + "): " + e.what());
      }
    }
  }
}

}  // namespace

std::string starling_home() {
  if (const char* home = std::getenv("STARLING_HOME"); home && *home) return home;
  return STARLING_SOURCE_DIR;
}

int run_experiment(const ExperimentOptions& options) {
  ExperimentSpec spec;
  try {
    spec = load_experiment(options.config);
    if (!options.only.empty())
      spec.variants.erase(std::remove_if(spec.variants.begin(), spec.variants.end(),
                                         [&](const Variant& v) {
                                           return v.name != spec.baseline &&
                                                  ::fnmatch(options.only.c_str(), v.name.c_str(), 0) != 0;
                                         }),
                          spec.variants.end());
    check_prerequisites(spec);
    check_partitions(spec);
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  fs::create_directories(options.out);
  Budget budget;
  int runs = 0;
  for (const auto& v : spec.variants) budget.total += v.repeat * run_length(v), runs += v.repeat;
  spdlog::info("experiment '{}': {} variants, {} runs, into {}", spec.name, spec.variants.size(), runs, options.out);
  std::vector<VariantOutcome> outcomes;
  bool ok = true;
  int index = 0;
  for (const auto& v : spec.variants) {
    outcomes.push_back({&v, {}});
    for (int r = 0; r < v.repeat && !g_interrupted; ++r) {
      write_running_report(spec, v, ++index, runs, options.out);
      outcomes.back().runs.push_back(run_variant_once(v, r, index, runs, options, budget));
      ok = ok && outcomes.back().runs.back().ok;
      if (outcomes.back().runs.back().ok) spdlog::info("variant {} done", v.name);
    }
  }
  if (g_interrupted) spdlog::warn("interrupted: the report covers the runs that finished"), ok = false;
  merge_metrics(outcomes, options.out);
  std::string table = write_report(spec, outcomes, options.out, {});  // plot.py reads its summary.json
  if (const auto plots = draw_plots(options.out); !plots.empty()) table = write_report(spec, outcomes, options.out, plots);
  std::printf("%s\n", table.c_str());
  spdlog::info("report {}/report.md, summary {}/summary.json, metrics {}/metrics.csv", options.out, options.out, options.out);
  return ok ? 0 : 1;
}

}  // namespace starling::cli
