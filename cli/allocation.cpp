#include "cli/allocation.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace starling::cli {
namespace {

// Slurm's own bound on one range (MAX_RANGE in hostlist.c); we hold the whole list to it.
constexpr std::size_t kMaxHosts = 65536;
// And on the tasks of one step, which the layout holds one entry each of.
constexpr long long kMaxTasks = 1 << 20;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

bool is_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// A non-negative decimal of at most 9 digits (no sign, no blanks), else invalid_argument.
long long decimal(const std::string& text, const std::string& what) {
  if (!is_digits(text) || text.size() > 9) bad(what + ": expected a number, got \"" + text + "\"");
  return std::stoll(text);
}

std::string padded(long long value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// The hosts one bracket group stands for: "01-03,07" is 01 02 03 07.
std::vector<std::string> expand_group(const std::string& group, const std::string& item) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= group.size()) {
    const std::size_t comma = std::min(group.find(',', start), group.size());
    const std::string range = group.substr(start, comma - start);
    const std::size_t dash = range.find('-');
    const std::string lo_text = range.substr(0, dash);
    const std::string hi_text = dash == std::string::npos ? lo_text : range.substr(dash + 1);
    if (!is_digits(lo_text) || !is_digits(hi_text) || lo_text.size() > 9 || hi_text.size() > 9)
      bad("\"" + item + "\": invalid range \"" + range + "\"");
    const long long lo = std::stoll(lo_text), hi = std::stoll(hi_text);
    if (lo > hi) bad("\"" + item + "\": invalid range \"" + range + "\" (its end is below its start)");
    if (static_cast<std::size_t>(hi - lo) + out.size() >= kMaxHosts)
      bad("\"" + item + "\": more than " + std::to_string(kMaxHosts) + " hosts");
    for (long long v = lo; v <= hi; ++v) out.push_back(padded(v, lo_text.size()));
    start = comma + 1;
  }
  return out;
}

// One item of the list ("node[01-02]x[1-2]"): literal text and groups, expanded as their product.
void expand_item(const std::string& item, std::vector<std::string>& hosts) {
  std::vector<std::string> names{""};
  std::size_t at = 0;
  while (at < item.size()) {
    const std::size_t open = item.find('[', at);
    const std::string text = item.substr(at, open == std::string::npos ? std::string::npos : open - at);
    for (auto& n : names) n += text;
    if (open == std::string::npos) break;
    const std::size_t close = item.find(']', open);  // the splitter checked that one follows
    const std::vector<std::string> group = expand_group(item.substr(open + 1, close - open - 1), item);
    if (names.size() * group.size() + hosts.size() > kMaxHosts)
      bad("\"" + item + "\": more than " + std::to_string(kMaxHosts) + " hosts");
    std::vector<std::string> next;
    next.reserve(names.size() * group.size());
    for (const auto& n : names)
      for (const auto& g : group) next.push_back(n + g);
    names = std::move(next);
    at = close + 1;
  }
  hosts.insert(hosts.end(), names.begin(), names.end());
}

std::string required(const Environment& env, const std::string& name, const std::string& why) {
  const std::optional<std::string> v = env(name);
  if (!v || v->empty()) bad(name + " is not set (" + why + ")");
  return *v;
}

// The first set, non-empty one of two variables, with its name.
std::optional<std::pair<std::string, std::string>> first_of(const Environment& env, const std::string& a,
                                                            const std::string& b) {
  for (const auto& name : {a, b})
    if (const auto v = env(name); v && !v->empty()) return std::make_pair(name, *v);
  return std::nullopt;
}

Distribution distribution_of(const Environment& env) {
  const std::string text = env("SLURM_DISTRIBUTION").value_or("block");
  // "block:cyclic,Pack": the first level (across nodes) is the part before ':' or ','.
  const std::string across = text.substr(0, text.find_first_of(":,"));
  Distribution d;
  if (across == "block" || across.empty() || across == "*") return d;
  if (across == "cyclic") {
    d.kind = Distribution::Kind::cyclic;
    return d;
  }
  if (across.rfind("plane", 0) == 0) {
    d.kind = Distribution::Kind::plane;
    const std::string size = across.size() > 6 && across[5] == '=' ? across.substr(6) : env("SLURM_DIST_PLANESIZE").value_or("");
    const long long p = decimal(size, "SLURM_DISTRIBUTION=" + text + ": the plane size");
    if (p < 1) bad("SLURM_DISTRIBUTION=" + text + ": a plane size of at least 1");
    d.plane = static_cast<int>(p);
    return d;
  }
  bad("SLURM_DISTRIBUTION=" + text + ": Starling derives the endpoints of block, cyclic and plane distributions only; "
      "list the peers in [[peer]] entries for this one");
}

// The ranks on node `node`, in order.
std::vector<uint32_t> ranks_on(const std::vector<std::size_t>& node_of, std::size_t node) {
  std::vector<uint32_t> out;
  for (std::size_t r = 0; r < node_of.size(); ++r)
    if (node_of[r] == node) out.push_back(static_cast<uint32_t>(r));
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& hostlist) {
  std::vector<std::string> hosts;
  std::string item;
  bool in_group = false;
  const auto flush = [&] {
    if (!item.empty()) expand_item(item, hosts);
    item.clear();
  };
  for (const char ch : hostlist) {
    if (ch == '[') {
      if (in_group) bad("\"" + hostlist + "\": a '[' inside brackets");
      in_group = true;
    } else if (ch == ']') {
      if (!in_group) bad("\"" + hostlist + "\": a ']' without its '['");
      in_group = false;
    } else if (in_group && (ch == ' ' || ch == '\t' || ch == '\n')) {
      bad("\"" + hostlist + "\": a blank inside brackets");
    }
    if (!in_group && (ch == ',' || ch == ' ' || ch == '\t' || ch == '\n')) flush();
    else item += ch;
  }
  if (in_group) bad("\"" + hostlist + "\": a '[' without its ']'");
  flush();
  if (hosts.empty()) bad("\"" + hostlist + "\": no hosts");
  return hosts;
}

std::vector<int> expand_tasks_per_node(const std::string& tasks) {
  std::vector<int> out;
  long long total = 0;
  std::size_t start = 0;
  while (start <= tasks.size()) {
    const std::size_t comma = std::min(tasks.find(',', start), tasks.size());
    const std::string entry = tasks.substr(start, comma - start);
    const std::size_t paren = entry.find('(');
    const long long count = decimal(entry.substr(0, paren), "tasks per node \"" + tasks + "\"");
    long long repeat = 1;
    if (paren != std::string::npos) {
      if (entry.size() < paren + 4 || entry.compare(paren, 2, "(x") != 0 || entry.back() != ')')
        bad("tasks per node \"" + tasks + "\": expected COUNT or COUNT(xREPEAT), got \"" + entry + "\"");
      repeat = decimal(entry.substr(paren + 2, entry.size() - paren - 3), "tasks per node \"" + tasks + "\"");
    }
    if (count < 1 || repeat < 1) bad("tasks per node \"" + tasks + "\": counts of at least 1");
    if (static_cast<std::size_t>(repeat) + out.size() > kMaxHosts)
      bad("tasks per node \"" + tasks + "\": more than " + std::to_string(kMaxHosts) + " nodes");
    out.insert(out.end(), static_cast<std::size_t>(repeat), static_cast<int>(count));
    total += count * repeat;
    if (total > kMaxTasks) bad("tasks per node \"" + tasks + "\": more than " + std::to_string(kMaxTasks) + " tasks");
    start = comma + 1;
  }
  return out;
}

std::vector<std::size_t> nodes_of_ranks(const std::vector<int>& tasks_per_node, const Distribution& d) {
  const int per_round = d.kind == Distribution::Kind::block ? 0 : d.kind == Distribution::Kind::cyclic ? 1 : d.plane;
  std::vector<int> left(tasks_per_node);
  std::vector<std::size_t> node_of;
  // Each round every node with tasks left takes up to per_round of them (block: all).
  for (bool any = true; any;) {
    any = false;
    for (std::size_t n = 0; n < left.size(); ++n) {
      const int take = per_round == 0 ? left[n] : std::min(per_round, left[n]);
      node_of.insert(node_of.end(), static_cast<std::size_t>(std::max(take, 0)), n);
      left[n] -= std::max(take, 0);
      any = any || left[n] > 0;
    }
  }
  return node_of;
}

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

Allocation slurm_allocation(const Environment& env, int base_port) {
  const std::string why = "not a task of a Slurm job step: start the peers with srun";
  const auto nodelist = first_of(env, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST");
  if (!nodelist) bad("SLURM_STEP_NODELIST and SLURM_JOB_NODELIST are not set (" + why + ")");
  const bool step = nodelist->first == "SLURM_STEP_NODELIST";
  const std::string tasks_name = step ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
  const std::string count_name = step ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";

  std::vector<std::string> hosts;
  std::vector<int> tasks;
  try {
    hosts = expand_hostlist(nodelist->second);
    tasks = expand_tasks_per_node(required(env, tasks_name, why));
  } catch (const std::invalid_argument& e) {
    bad(std::string(e.what()) + " (from " + nodelist->first + " and " + tasks_name + ")");
  }
  if (hosts.size() != tasks.size())
    bad(nodelist->first + " names " + std::to_string(hosts.size()) + " node(s) but " + tasks_name + " counts tasks on " +
        std::to_string(tasks.size()));
  const std::vector<std::size_t> node_of = nodes_of_ranks(tasks, distribution_of(env));
  if (const auto n = env(count_name); n && !n->empty() && decimal(*n, count_name) != static_cast<long long>(node_of.size()))
    bad(count_name + "=" + *n + " but " + tasks_name + " adds up to " + std::to_string(node_of.size()) + " tasks");
  const long long rank = decimal(required(env, "SLURM_PROCID", why), "SLURM_PROCID");
  if (rank >= static_cast<long long>(node_of.size()))
    bad("SLURM_PROCID=" + std::to_string(rank) + " but the step has " + std::to_string(node_of.size()) + " tasks");

  Allocation a;
  a.rank = static_cast<std::size_t>(rank);
  std::vector<int> next_port(hosts.size(), base_port);
  for (std::size_t r = 0; r < node_of.size(); ++r) {
    const int port = next_port[node_of[r]]++;
    if (port > 65535) bad("launch.base_port " + std::to_string(base_port) + " leaves no room for " +
                          std::to_string(tasks[node_of[r]]) + " ports in a row on " + hosts[node_of[r]]);
    a.peers.push_back({static_cast<uint32_t>(r), "tcp://" + hosts[node_of[r]] + ":" + std::to_string(port)});
  }

  // Where Slurm says where this task runs, the layout must say the same.
  const std::size_t mine = node_of[a.rank];
  const std::vector<uint32_t> local = ranks_on(node_of, mine);
  const auto index = static_cast<std::size_t>(std::find(local.begin(), local.end(), a.rank) - local.begin());
  const std::string layout = " (SLURM_DISTRIBUTION=" + env("SLURM_DISTRIBUTION").value_or("") +
                             "): Starling cannot derive this task layout; list the peers in [[peer]] entries";
  if (const auto name = env("SLURMD_NODENAME"); name && !name->empty() && *name != hosts[mine])
    bad("task " + std::to_string(rank) + " runs on " + *name + " but the layout puts it on " + hosts[mine] + layout);
  if (const auto id = env("SLURM_LOCALID"); step && id && !id->empty() && decimal(*id, "SLURM_LOCALID") != static_cast<long long>(index))
    bad("task " + std::to_string(rank) + " has SLURM_LOCALID=" + *id + " but the layout makes it " + std::to_string(index) + layout);
  if (const auto gtids = env("SLURM_GTIDS"); step && gtids && !gtids->empty()) {
    std::string expected;
    for (uint32_t r : local) expected += (expected.empty() ? "" : ",") + std::to_string(r);
    if (*gtids != expected) bad("SLURM_GTIDS=" + *gtids + " but the layout puts tasks " + expected + " on " + hosts[mine] + layout);
  }
  return a;
}

Allocation openmpi_allocation(const Environment& env, int base_port) {
  const std::string why = "not a rank of an Open MPI job: start the peers with mpirun";
  const long long size = decimal(required(env, "OMPI_COMM_WORLD_SIZE", why), "OMPI_COMM_WORLD_SIZE");
  const long long rank = decimal(required(env, "OMPI_COMM_WORLD_RANK", why), "OMPI_COMM_WORLD_RANK");
  const long long local = decimal(required(env, "OMPI_COMM_WORLD_LOCAL_SIZE", why), "OMPI_COMM_WORLD_LOCAL_SIZE");
  if (rank >= size) bad("OMPI_COMM_WORLD_RANK=" + std::to_string(rank) + " but OMPI_COMM_WORLD_SIZE=" + std::to_string(size));
  if (local != size)
    bad("this host runs " + std::to_string(local) + " of the job's " + std::to_string(size) +
        " ranks, and Open MPI's environment names no other rank's host: list the peers in [[peer]] entries, "
        "or start them with srun and launch.endpoints = \"slurm\"");
  if (base_port + size - 1 > 65535)
    bad("launch.base_port " + std::to_string(base_port) + " leaves no room for " + std::to_string(size) + " ports in a row");
  Allocation a;
  a.rank = static_cast<std::size_t>(rank);
  for (long long r = 0; r < size; ++r)
    a.peers.push_back({static_cast<uint32_t>(r), "tcp://127.0.0.1:" + std::to_string(base_port + r)});
  return a;
}

}  // namespace starling::cli
