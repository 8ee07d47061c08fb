#include "cli/launch_command.h"

#include "cli/config.h"
#include "cli/process.h"
#include "cli/train_command.h"
#include "job/exit_codes.h"
#include "job/in_process_launch.h"
#include "job/json.h"
#include "job/task_kind.h"

#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace starling::cli {

using job::JsonObject;
using job::PeerRun;
using job::exit_code_of;
using job::run_peers_in_process;
using job::summary_field;
using job::summary_number;
using job::task_kind;
using job::write_file_atomic;

namespace {

// The namespaces and addresses scripts/netns.sh creates.
const std::string kNetnsPrefix = "starling-ns";
const std::string kNetnsSubnet = "10.77.0.";

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

// A peer's process: its run (status: the exit code once it ended) and its output.
struct Child : PeerRun {
  pid_t pid = -1;
  int out = -1;  // read end of the child's stdout+stderr
  std::string pending;
};

void spawn(Child& child, std::size_t index, const LaunchOptions& o) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<std::string> args{o.executable, "peer", "--config", o.config, "--id", std::to_string(child.id),
                                "--summary", child.summary};
  for (const auto& set : o.overrides) args.insert(args.end(), {"--set", set});
  if (o.resume) args.push_back("--resume");
  if (o.netns) args.insert(args.begin(), {"/usr/bin/env", "ip", "netns", "exec", kNetnsPrefix + std::to_string(index)});
  child.pid = spawn_process(args, fds[1], fds[0]);
  ::close(fds[1]);
  child.out = fds[0];
}

// Copies whole lines of a child's output to our stderr behind its peer id.
void drain(Child& child) {
  char buf[4096];
  const ssize_t got = ::read(child.out, buf, sizeof buf);
  if (got <= 0) {
    if (!child.pending.empty()) std::fprintf(stderr, "[peer %u] %s\n", child.id, child.pending.c_str());
    ::close(child.out);
    child.out = -1;
    return;
  }
  child.pending.append(buf, static_cast<std::size_t>(got));
  std::size_t eol;
  while ((eol = child.pending.find_first_of("\n\r")) != std::string::npos) {
    if (eol > 0) std::fprintf(stderr, "[peer %u] %s\n", child.id, child.pending.substr(0, eol).c_str());
    child.pending.erase(0, eol + 1);
  }
}

// Runs until every child has exited; stops the rest when one fails or on Ctrl-C. One
// killed by a signal from outside is lost, not failed: the others go on without it.
bool supervise(std::vector<Child>& children) {
  bool stopping = false, ok = true;
  std::size_t running = children.size();
  while (running > 0) {
    std::vector<pollfd> fds;
    for (auto& c : children)
      if (c.out >= 0) fds.push_back({c.out, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 200);
    for (auto& c : children)
      for (const auto& p : fds)
        if (p.fd == c.out && (p.revents & (POLLIN | POLLHUP))) drain(c);
    for (auto& c : children) {
      int status = 0;
      if (c.status >= 0 || ::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      while (c.out >= 0) drain(c);
      c.status = exit_code(status);
      --running;
      if (WIFSIGNALED(status) && !stopping) {
        spdlog::warn("peer {} was killed by signal {}; the others go on without it", c.id, WTERMSIG(status));
      } else if (c.status != 0 && !stopping) {
        spdlog::error("peer {} failed (exit {}); stopping the others", c.id, c.status);
        ok = false;
      }
    }
    if ((!ok || g_interrupted) && !stopping) {
      if (g_interrupted) spdlog::warn("interrupted: stopping every peer");
      stopping = true;
      ok = false;
      for (auto& c : children)
        if (c.status < 0) ::kill(c.pid, SIGTERM);
    }
  }
  return ok;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double number(const std::string& json, const std::string& key) { return summary_number(json, key).value_or(0.0); }

bool attacks(const Config& c, uint32_t id) {
  for (const PeerEntry& p : c.peers)
    if (p.id == id) return p.attack.on();
  return false;
}

// The attackers' mean test accuracy, apart from the honest peers' (null with none).
std::optional<double> attackers_accuracy(const std::vector<PeerRun>& attackers) {
  if (attackers.empty()) return std::nullopt;
  double acc = 0.0;
  for (const auto& a : attackers) acc += number(read_file(a.summary), "test_accuracy") / attackers.size();
  return acc;
}

// Accuracy, loss and time to target are the honest peers' alone; attackers count apart.
JsonObject aggregate(const Config& c, const std::vector<PeerRun>& all) {
  std::vector<PeerRun> children, attackers;
  std::vector<std::string> lost;
  for (const auto& child : all) {
    if (child.status != 0) lost.push_back(std::to_string(child.id));
    else if (attacks(c, child.id)) attackers.push_back(child);
    else children.push_back(child);
  }
  std::vector<std::string> checksums, files, texts;
  double samples = 0, rate = 0, wall = 0, acc = 0, acc_min = 1, loss = 0, sent = 0, received = 0, ttt = 0;
  double compute = 0, exchange = 0;
  bool all_reached = true;
  for (const auto& child : children) {
    const std::string s = read_file(child.summary);
    texts.push_back(s);
    std::string checksum = summary_field(s, "model_checksum");
    checksums.push_back(checksum.size() >= 2 ? checksum.substr(1, checksum.size() - 2) : checksum);
    files.push_back(child.summary);
    samples += number(s, "samples"), rate += number(s, "samples_per_second");
    wall = std::max(wall, number(s, "wall_seconds"));
    acc += number(s, "test_accuracy") / children.size(), acc_min = std::min(acc_min, number(s, "test_accuracy"));
    loss += number(s, "train_loss") / children.size();
    sent += number(s, "bytes_sent"), received += number(s, "bytes_received");
    compute += number(s, "compute_seconds") / children.size();
    exchange += number(s, "exchange_seconds") / children.size();
    const std::string t = summary_field(s, "time_to_target_seconds");
    if (t.empty() || t == "null") all_reached = false;
    else ttt = std::max(ttt, std::stod(t));
  }
  bool identical = true;
  for (const auto& sum : checksums) identical = identical && sum == checksums.front();
  JsonObject j;
  j.add("run", c.run.name)
      .add("mode", gossip::exchange_mode_name(c.node.exchange.mode))
      .add("topology", c.node.exchange.topology)
      .add("peers", static_cast<int>(children.size()))
      .add("learners_per_peer", c.node.learners)
      .add("epochs", c.run.epochs)
      .add("samples", samples)
      .add("wall_seconds", wall)
      .add("samples_per_second", rate)
      .add("train_loss", loss)
      .add("test_accuracy", acc)
      .add("test_accuracy_min", acc_min)
      .add("target_accuracy", c.run.target_accuracy)
      .add("time_to_target_seconds", all_reached ? std::optional<double>(ttt) : std::nullopt)
      .add("bytes_sent", sent)
      .add("bytes_received", received)
      .add("compute_seconds", compute)
      .add("exchange_seconds", exchange)
      .add("model_checksum", checksums)
      .add("identical_models", identical)
      .add("peers_lost", lost)
      .add("attackers", static_cast<int>(attackers.size()))
      .add("attackers_test_accuracy", attackers_accuracy(attackers))
      .add("aggregator", std::string(gossip::aggregator_name(c.node.exchange.aggregator.kind)))
      .add("peer_summaries", files);
  task_kind(c.data).summarize_job(j, c, texts);
  return j;
}

// A partition that leaves a peer without data, or a D-Cliques clique without a class, is a
// config error: report it once, here, rather than from every peer after they have started.
int check_partition_first(const Config& config) {
  return exit_code_of([&] {
    task_kind(config.data).check_split(config, false);
    return 0;
  });
}

// Attackers are never a default: a config that has them says so before anything starts.
void announce_attackers(const Config& c) {
  std::string list;
  for (const PeerEntry& p : c.peers)
    if (p.attack.on())
      list += (list.empty() ? "" : ", ") + std::to_string(p.id) + " (" + gossip::attack_name(p.attack.kind) + " x" +
              std::to_string(p.attack.scale) + ")";
  if (!list.empty())
    spdlog::warn("this job has attacking peers: {}; aggregator \"{}\"; they are reported apart from the honest peers",
                 list, gossip::aggregator_name(c.node.exchange.aggregator.kind));
}

std::string peer_summary(const Config& c, uint32_t id) {
  return c.run.out_dir + "/" + c.run.name + "-peer" + std::to_string(id) + ".summary.json";
}

// --netns: peer i at 10.77.0.(i+1) in namespace starling-ns<i>, each endpoint keeping its
// port; 2 when a namespace is missing.
int netns_overrides(const Config& config, LaunchOptions& o) {
  for (std::size_t i = 0; i < config.peers.size(); ++i) {
    if (::access(("/run/netns/" + kNetnsPrefix + std::to_string(i)).c_str(), F_OK) != 0) {
      spdlog::error("--netns: namespace {}{} does not exist; create them with `sudo scripts/netns.sh up {} [RATE]`",
                    kNetnsPrefix, i, config.peers.size());
      return 2;
    }
    const std::string& endpoint = config.peers[i].endpoint;
    const std::string port = endpoint.substr(endpoint.rfind(':') + 1);
    o.overrides.push_back("peer." + std::to_string(i) + ".endpoint=tcp://" + kNetnsSubnet + std::to_string(i + 1) + ":" + port);
  }
  return 0;
}

// Every peer as a thread of this process (cli/in_process_launch.h); 0 when all finished.
int launch_threads(const Config& config, const LaunchOptions& o, std::vector<PeerRun>& runs) {
  if (o.netns || !o.hold.empty()) {
    spdlog::error("--in-process runs every peer in this process: it takes neither --netns nor --hold");
    return 2;
  }
  spdlog::info("launching {} peers of '{}' in this process ({} over {})", config.peers.size(), config.run.name,
               gossip::exchange_mode_name(config.node.exchange.mode), config.node.exchange.topology);
  for (const PeerEntry& p : config.peers) runs.push_back(PeerRun{p.id, peer_summary(config, p.id), -1});
  if (const int status = exit_code_of([&] { return run_peers_in_process(config, runs) ? 0 : 1; }); status != 0)
    return status;
  const auto failed = std::find_if(runs.begin(), runs.end(), [](const PeerRun& r) { return r.status != 0; });
  if (failed == runs.end()) return 0;
  spdlog::error("peer {} failed (exit {})", failed->id, failed->status);
  return failed->status == 2 ? 2 : 1;
}

// Every peer as a `starling peer` process; fills `runs` with those that were started.
int launch_processes(const Config& config, LaunchOptions o, std::vector<PeerRun>& runs) {
  if (o.netns)
    if (const int status = netns_overrides(config, o); status != 0) return status;
  std::vector<Child> children;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  const auto held = std::count_if(config.peers.begin(), config.peers.end(), [&](const PeerEntry& p) {
    return std::find(o.hold.begin(), o.hold.end(), p.id) != o.hold.end();
  });
  spdlog::info("launching {} peers of '{}' ({} over {})", config.peers.size() - static_cast<std::size_t>(held), config.run.name,
               gossip::exchange_mode_name(config.node.exchange.mode), config.node.exchange.topology);
  try {
    for (std::size_t i = 0; i < config.peers.size(); ++i) {
      const uint32_t id = config.peers[i].id;
      if (std::find(o.hold.begin(), o.hold.end(), id) != o.hold.end()) {
        spdlog::info("peer {} held back: start it with `starling peer --config {} --id {}` to join", id, o.config, id);
        continue;
      }
      children.emplace_back();
      children.back().id = id;
      children.back().summary = peer_summary(config, id);
      spawn(children.back(), i, o);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    for (auto& c : children)
      if (c.pid > 0) ::kill(c.pid, SIGTERM), ::waitpid(c.pid, nullptr, 0);
    return 1;
  }
  if (!supervise(children)) return 1;
  if (std::none_of(children.begin(), children.end(), [](const Child& c) { return c.status == 0; })) {
    spdlog::error("no peer finished");
    return 1;
  }
  runs.assign(children.begin(), children.end());
  return 0;
}

}  // namespace

int run_launch(const LaunchOptions& options) {
  Config config;
  try {
    std::vector<std::string> overrides = options.overrides;
    if (options.in_process) overrides.push_back("launch.in_process=true");
    config = load_config(options.config, overrides);
    apply_resume(config, options.resume);  // read by the peers of an in-process job
    if (config.node.exchange.mode == gossip::ExchangeMode::none)
      throw ConfigError(options.config + ": exchange.mode: `starling launch` needs an exchange mode and [[peer]] entries");
    if (config.launch.endpoints != "peers")
      throw ConfigError(config.launch.endpoints_at + ": \"" + config.launch.endpoints +
                        "\": `starling launch` starts the [[peer]] list on this host; start the peers of an allocation "
                        "with `srun starling peer` or `mpirun starling peer` (docs/slurm.md)");
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  if (const int status = check_partition_first(config); status != 0) return status;
  announce_attackers(config);
  std::vector<PeerRun> runs;
  const int status =
      config.launch.in_process ? launch_threads(config, options, runs) : launch_processes(config, options, runs);
  if (status != 0) return status;
  const JsonObject summary = aggregate(config, runs);
  const std::string path = options.summary.empty() ? config.run.out_dir + "/" + config.run.name + ".summary.json" : options.summary;
  write_file_atomic(path, summary.str() + "\n");
  const std::string text = summary.str();
  spdlog::info("all {} peers done: {}, identical models: {}; summary {}", runs.size(), task_kind(config.data).job_outcome(text),
               summary_field(text, "identical_models"), path);
  return 0;
}

}  // namespace starling::cli
