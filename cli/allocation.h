#pragma once
// A job's peers from the allocation a cluster launcher made, not from a hand-written
// [[peer]] list: under Slurm, peer i is task SLURM_PROCID = i, on the node Slurm placed it on,
// at the base port plus its index among the step's tasks on that node; under Open MPI the
// same where its environment says enough (all ranks on one host). Pure functions of the
// environment they are given; bad input throws std::invalid_argument, never aborts.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace starling::cli {

/// A Slurm hostlist expanded as `scontrol show hostnames` does: comma- (or blank-) separated
/// items, each literal text with bracket groups of ranges ("node[01-03,07],gpu5"); a range
/// keeps the width of its lower bound ("[08-10]": 08 09 10, "[8-10]": 8 9 10); several groups
/// in one item expand as their product, leftmost slowest ("a[1-2]b[3-4]": a1b3 a1b4 a2b3
/// a2b4); order and duplicates are kept. Text after the last group is accepted (Slurm 22.05
/// refuses it). Throws std::invalid_argument on a malformed list, an empty one, or more than
/// 65,536 hosts.
std::vector<std::string> expand_hostlist(const std::string& hostlist);

/// Slurm's tasks-per-node syntax expanded to one count per node: "2(x3),1" is {2, 2, 2, 1}.
/// Throws std::invalid_argument when malformed, a count is 0, or there are over 65,536 nodes
/// or 2^20 tasks.
std::vector<int> expand_tasks_per_node(const std::string& tasks);

/// Which rank goes to which node: Slurm's first-level task distribution (SLURM_DISTRIBUTION,
/// "block" when unset). Plane hands out `plane` tasks per node per round; cyclic is plane 1;
/// block gives each node all of its tasks in turn.
struct Distribution {
  enum class Kind { block, cyclic, plane } kind = Kind::block;
  int plane = 1;
};

/// The node index of every rank, given each node's task count.
std::vector<std::size_t> nodes_of_ranks(const std::vector<int>& tasks_per_node, const Distribution& d);

/// One peer of an allocation: its rank (its peer id) and endpoint.
struct AllocatedPeer {
  uint32_t rank = 0;
  std::string endpoint;  // tcp://host:port
};

struct Allocation {
  std::vector<AllocatedPeer> peers;  // every peer of the job, by rank
  std::size_t rank = 0;              // this process's
};

/// Looks a variable up: the process's environment, or a table in tests.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
Environment process_environment();

/// The peers of the Slurm job step this process is a task of: SLURM_STEP_NODELIST and
/// SLURM_STEP_TASKS_PER_NODE (else SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE, for a task
/// of the batch script itself), ranks laid out by SLURM_DISTRIBUTION, and this task's
/// SLURM_PROCID. Where Slurm says where this task is (SLURMD_NODENAME, SLURM_LOCALID,
/// SLURM_GTIDS) the layout must agree, so that a distribution it cannot derive (arbitrary,
/// a plane over uneven nodes) is an error rather than wrong endpoints.
Allocation slurm_allocation(const Environment& env, int base_port);

/// The peers of an Open MPI job (mpirun): OMPI_COMM_WORLD_SIZE ranks, this one
/// OMPI_COMM_WORLD_RANK. Open MPI's environment names no other rank's host, so only a job
/// whose ranks are all on this host (OMPI_COMM_WORLD_LOCAL_SIZE = OMPI_COMM_WORLD_SIZE) can
/// be derived: rank r at tcp://127.0.0.1:(base + r). Throws std::invalid_argument otherwise.
Allocation openmpi_allocation(const Environment& env, int base_port);

}  // namespace starling::cli
