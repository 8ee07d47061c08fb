// Every peer of a job as a thread of one process (job/in_process_launch.h).
#include "job/in_process_launch.h"

#include "job/exit_codes.h"
#include "job/task_kind.h"
#include "job/node_job.h"
#include "gossip/transport/transport_context.h"
#include "kernels/gemm.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <thread>

namespace starling::job {
namespace {

// Descriptors one peer holds: in memory, its metrics file; over ZeroMQ (CURVE) also its
// sockets and their connections (about 2 per watched peer and per data neighbour, both ends
// in this process) and ZeroMQ's mailboxes.
constexpr rlim_t kDescriptorsPerPeerInMemory = 4;
constexpr rlim_t kDescriptorsPerPeerOverZmq = 64;

// Each peer's threads (it, and its actor system's and learners', which inherit it) run at
// this nice value, above the in-memory network's heartbeat threads: among a thousand
// peers' threads on two cores, heartbeats at the same priority get too small a share to go
// out in time, and peers that compute are taken for dead.
constexpr int kPeerNice = 10;

void lower_priority_of_this_thread() {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kPeerNice);
}

// Raises the soft limit on open descriptors to what `peers` need, up to the hard limit.
bool enough_descriptors(std::size_t peers, rlim_t per_peer) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return true;
  const rlim_t want = 256 + per_peer * static_cast<rlim_t>(peers);
  if (limit.rlim_cur >= want) return true;
  limit.rlim_cur = std::min(want, limit.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur >= want) return true;
  spdlog::error("{} peers in one process need about {} open descriptors, and this host allows {} (ulimit -Hn)", peers,
                want, limit.rlim_max);
  return false;
}

// One line every few seconds while the peers run: steps done of all, and the time left.
void report_progress(const std::deque<std::atomic<int64_t>>& steps, const std::deque<std::atomic<int64_t>>& totals,
                     std::chrono::steady_clock::time_point start) {
  int64_t done = 0, total = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) done += steps[i].load(), total += totals[i].load();
  if (total == 0) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double eta = done > 0 ? elapsed * static_cast<double>(total - done) / static_cast<double>(done) : 0.0;
  spdlog::info("{} peers: step {} of {} ({:.0f} %), {:.0f} s, about {:.0f} s left", steps.size(), done, total,
               100.0 * static_cast<double>(done) / static_cast<double>(total), elapsed, eta);
}

}  // namespace

bool run_peers_in_process(const Config& config, std::vector<PeerRun>& peers) {
  // CURVE needs a wire to secure: such peers keep ZeroMQ, each its own context.
  const bool in_memory = config.node.exchange.keys_dir.empty();
  if (!enough_descriptors(peers.size(), in_memory ? kDescriptorsPerPeerInMemory : kDescriptorsPerPeerOverZmq))
    return false;
  kernels::set_threads(config.kernel_threads);
  Config shared = config;
  if (in_memory) shared.node.exchange.context = std::make_shared<gossip::TransportContext>(gossip::InMemory{});
  // The data loaded, fitted to the model and split once for all the peers.
  const PeerTasks tasks = task_kind(shared.data).load(shared);
  const auto train = [&](uint32_t id, const std::string& summary, const PeerOutput* quiet) {
    Config mine = shared;
    select_peer(mine, id);
    const std::shared_ptr<const Task> task = tasks(mine);
    return train_on(std::move(mine), task, summary, quiet);
  };

  std::deque<std::atomic<int64_t>> steps(peers.size()), totals(peers.size());
  std::vector<PeerOutput> outputs(peers.size());
  std::atomic<std::size_t> running{peers.size()};
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    outputs[i] = PeerOutput{"[peer " + std::to_string(peers[i].id) + "] ", &steps[i], &totals[i]};
    threads.emplace_back([&, i] {
      if (in_memory) lower_priority_of_this_thread();
      peers[i].status = exit_code_of([&] {
        return train(peers[i].id, peers[i].summary, &outputs[i]);
      });
      --running;
    });
  }
  const auto start = std::chrono::steady_clock::now();
  auto next_report = start + std::chrono::seconds(5);
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (std::chrono::steady_clock::now() < next_report) continue;
    report_progress(steps, totals, start);
    next_report += std::chrono::seconds(5);
  }
  for (auto& t : threads) t.join();
  return true;
}

}  // namespace starling::job
