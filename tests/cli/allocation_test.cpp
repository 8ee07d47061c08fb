// A job's peers from the allocation (cli/allocation.h): Slurm's hostlist and tasks-per-node
// syntax against the rules `scontrol show hostnames` follows (the cases below are its output
// on Slurm 22.05), the rank-to-node layouts, and the config key that uses them, with
// environments as Slurm's srun and Open MPI's mpirun set them.
#define BOOST_TEST_MODULE cli_allocation
#include <boost/test/unit_test.hpp>

#include "cli/allocation.h"
#include "cli/config.h"

#include <map>

using namespace starling::cli;
using Hosts = std::vector<std::string>;

namespace {

Environment table(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

// The message of what `body` threw as invalid_argument, or "" when it did not throw.
template <typename Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

Hosts endpoints(const Allocation& a) {
  Hosts out;
  for (const auto& p : a.peers) out.push_back(p.endpoint);
  return out;
}

// Two nodes of two tasks each, as srun sets them for the task of rank `rank`.
std::map<std::string, std::string> step_of_four(int rank) {
  return {{"SLURM_STEP_NODELIST", "node[07-08]"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}, {"SLURM_STEP_NUM_TASKS", "4"},
          {"SLURM_PROCID", std::to_string(rank)}, {"SLURMD_NODENAME", rank < 2 ? "node07" : "node08"},
          {"SLURM_LOCALID", std::to_string(rank % 2)}, {"SLURM_GTIDS", rank < 2 ? "0,1" : "2,3"}};
}

const char* const kSlurmJob = "[exchange]\nmode = \"allreduce\"\n[launch]\nendpoints = \"slurm\"\nbase_port = 7000\n";

}  // namespace

BOOST_AUTO_TEST_CASE(hostlist_ranges_padding_and_groups) {
  BOOST_TEST(expand_hostlist("node[01-03,07],gpu5") == (Hosts{"node01", "node02", "node03", "node07", "gpu5"}),
             boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("a[1-2]b[3-4]") == (Hosts{"a1b3", "a1b4", "a2b3", "a2b4"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n[1-2][3]") == (Hosts{"n13", "n23"}), boost::test_tools::per_element());
  // The width is the lower bound's: padding follows it, not the upper bound.
  BOOST_TEST(expand_hostlist("n[8-10]") == (Hosts{"n8", "n9", "n10"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n[008-10]") == (Hosts{"n008", "n009", "n010"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n[01-2]") == (Hosts{"n01", "n02"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n[1-02]") == (Hosts{"n1", "n2"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("x1[2-3]") == (Hosts{"x12", "x13"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("[1-2]") == (Hosts{"1", "2"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n1-2") == (Hosts{"n1-2"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(hostlist_keeps_order_and_duplicates_and_skips_empty_items) {
  BOOST_TEST(expand_hostlist("a,b,a") == (Hosts{"a", "b", "a"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n[1-3,2]") == (Hosts{"n1", "n2", "n3", "n2"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n[1-2],,m") == (Hosts{"n1", "n2", "m"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist(" a b") == (Hosts{"a", "b"}), boost::test_tools::per_element());
  BOOST_TEST(expand_hostlist("n[0-65535]").size() == 65536u);
}

BOOST_AUTO_TEST_CASE(hostlist_errors) {
  for (const char* bad : {"", ",", "n[3-1]", "n[]", "n[1-2,]", "n[a-b]", "n[-1]", "n[1-2", "n[1-2]]", "n[[1]]",
                          "n[ 1-2]", "n[0-65536]", "a[0-255]b[0-255]c[0-1]", "n[1-9999999999]"})
    BOOST_TEST(!error_of([&] { expand_hostlist(bad); }).empty(), bad);
  BOOST_TEST(contains(error_of([] { expand_hostlist("n[3-1]"); }), "\"3-1\""));
}

BOOST_AUTO_TEST_CASE(tasks_per_node_syntax) {
  BOOST_TEST(expand_tasks_per_node("2(x3),1") == (std::vector<int>{2, 2, 2, 1}), boost::test_tools::per_element());
  BOOST_TEST(expand_tasks_per_node("4") == (std::vector<int>{4}), boost::test_tools::per_element());
  BOOST_TEST(expand_tasks_per_node("1,3(x2)") == (std::vector<int>{1, 3, 3}), boost::test_tools::per_element());
  for (const char* bad : {"", "0", "2(x0)", "(x3)", "2(3)", "2(x3", "2x3", "2,,1", "-1", "2(x3)1", "1000(x65536)"})
    BOOST_TEST(!error_of([&] { expand_tasks_per_node(bad); }).empty(), bad);
}

BOOST_AUTO_TEST_CASE(layouts_block_cyclic_plane) {
  using D = Distribution;
  const std::vector<int> tasks{3, 1, 2};
  BOOST_TEST(nodes_of_ranks(tasks, D{}) == (std::vector<std::size_t>{0, 0, 0, 1, 2, 2}), boost::test_tools::per_element());
  BOOST_TEST(nodes_of_ranks(tasks, D{D::Kind::cyclic, 1}) == (std::vector<std::size_t>{0, 1, 2, 0, 2, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(nodes_of_ranks(tasks, D{D::Kind::plane, 2}) == (std::vector<std::size_t>{0, 0, 1, 2, 2, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(slurm_step_peers_take_consecutive_ports_per_node) {
  const Hosts expected{"tcp://node07:7000", "tcp://node07:7001", "tcp://node08:7000", "tcp://node08:7001"};
  for (int rank = 0; rank < 4; ++rank) {
    const Allocation a = slurm_allocation(table(step_of_four(rank)), 7000);
    BOOST_TEST(endpoints(a) == expected, boost::test_tools::per_element());
    BOOST_TEST(a.rank == static_cast<std::size_t>(rank));
    for (std::size_t i = 0; i < a.peers.size(); ++i) BOOST_TEST(a.peers[i].rank == i);
  }
}

BOOST_AUTO_TEST_CASE(slurm_cyclic_step_and_batch_script_fallback) {
  auto env = step_of_four(1);
  env["SLURM_DISTRIBUTION"] = "cyclic:block";
  env["SLURMD_NODENAME"] = "node08", env["SLURM_LOCALID"] = "0", env["SLURM_GTIDS"] = "1,3";
  BOOST_TEST(endpoints(slurm_allocation(table(env), 7000)) ==
                 (Hosts{"tcp://node07:7000", "tcp://node08:7000", "tcp://node07:7001", "tcp://node08:7001"}),
             boost::test_tools::per_element());
  // The batch script's own environment: the job's variables, no step's.
  const auto job = table({{"SLURM_JOB_NODELIST", "c[1-3]"}, {"SLURM_TASKS_PER_NODE", "1(x3)"}, {"SLURM_NTASKS", "3"},
                          {"SLURM_PROCID", "0"}, {"SLURMD_NODENAME", "c1"}});
  BOOST_TEST(endpoints(slurm_allocation(job, 5600)) == (Hosts{"tcp://c1:5600", "tcp://c2:5600", "tcp://c3:5600"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(slurm_errors_say_what_is_wrong) {
  const auto with = [](std::map<std::string, std::string> changes, int base = 7000) {
    auto env = step_of_four(2);
    for (const auto& [k, v] : changes) {
      if (v.empty()) env.erase(k);
      else env[k] = v;
    }
    return error_of([&] { slurm_allocation(table(env), base); });
  };
  BOOST_TEST(with({}).empty());
  BOOST_TEST(contains(with({{"SLURM_STEP_NODELIST", ""}}), "start the peers with srun"));
  BOOST_TEST(contains(with({{"SLURM_PROCID", ""}}), "SLURM_PROCID is not set"));
  BOOST_TEST(contains(with({{"SLURM_PROCID", "4"}}), "the step has 4 tasks"));
  BOOST_TEST(contains(with({{"SLURM_STEP_TASKS_PER_NODE", "2(x3)"}, {"SLURM_STEP_NUM_TASKS", "6"}}), "names 2 node(s)"));
  BOOST_TEST(contains(with({{"SLURM_STEP_NUM_TASKS", "5"}}), "adds up to 4"));
  BOOST_TEST(contains(with({{"SLURM_STEP_NODELIST", "node[08-07]"}}), "SLURM_STEP_NODELIST"));
  BOOST_TEST(contains(with({{"SLURMD_NODENAME", "node07"}}), "cannot derive this task layout"));
  BOOST_TEST(contains(with({{"SLURM_LOCALID", "1"}}), "cannot derive this task layout"));
  BOOST_TEST(contains(with({{"SLURM_GTIDS", "2"}}), "cannot derive this task layout"));
  BOOST_TEST(contains(with({{"SLURM_DISTRIBUTION", "arbitrary"}}), "[[peer]]"));
  BOOST_TEST(contains(with({}, 65535), "no room for 2 ports"));
}

BOOST_AUTO_TEST_CASE(openmpi_on_one_host_and_not_beyond) {
  const auto one_host = table({{"OMPI_COMM_WORLD_SIZE", "3"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "3"}});
  const Allocation a = openmpi_allocation(one_host, 9000);
  BOOST_TEST(endpoints(a) == (Hosts{"tcp://127.0.0.1:9000", "tcp://127.0.0.1:9001", "tcp://127.0.0.1:9002"}),
             boost::test_tools::per_element());
  BOOST_TEST(a.rank == 2u);
  const auto two_hosts = table({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  BOOST_TEST(contains(error_of([&] { openmpi_allocation(two_hosts, 9000); }), "names no other rank's host"));
  BOOST_TEST(contains(error_of([] { openmpi_allocation(table({}), 9000); }), "start the peers with mpirun"));
}

BOOST_AUTO_TEST_CASE(config_takes_the_peers_and_the_rank_from_the_step) {
  const Config c = parse_config(kSlurmJob, "job.toml", {}, table(step_of_four(3)));
  BOOST_REQUIRE_EQUAL(c.peers.size(), 4u);
  BOOST_TEST(c.peers[2].endpoint == "tcp://node08:7000");
  BOOST_TEST(c.peers[3].id == 3u);
  BOOST_TEST(c.node.exchange.peers.size() == 4u);
  BOOST_TEST(c.allocation_rank.value_or(99) == 3u);
  // --set moves the ports.
  const Config moved = parse_config(kSlurmJob, "job.toml", {"launch.base_port=8000"}, table(step_of_four(0)));
  BOOST_TEST(moved.peers[1].endpoint == "tcp://node07:8001");
}

BOOST_AUTO_TEST_CASE(config_errors_name_file_line_and_key) {
  const auto error = [](const std::string& text, const Environment& env) {
    try {
      parse_config(text, "job.toml", {}, env);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string outside = error(kSlurmJob, table({}));
  BOOST_TEST(contains(outside, "job.toml:4: launch.endpoints: \"slurm\": "), outside);
  BOOST_TEST(contains(outside, "srun"), outside);
  const std::string both = error(std::string(kSlurmJob) + "[[peer]]\nid = 0\nendpoint = \"tcp://a:1\"\n", table(step_of_four(0)));
  BOOST_TEST(contains(both, "job.toml:4: launch.endpoints: \"slurm\": expected no [[peer]] entries"), both);
  const std::string typo = error("[launch]\nendpoints = \"slurn\"\n", table({}));
  BOOST_TEST(contains(typo, "job.toml:2: launch.endpoints"), typo);
  const std::string port = error("[launch]\nendpoints = \"slurm\"\nbase_port = 70000\n", table(step_of_four(0)));
  BOOST_TEST(contains(port, "job.toml:3: launch.base_port"), port);
  // Peers without a [[peer]] list and without an allocation: the default still needs a list.
  BOOST_TEST(!error("[exchange]\nmode = \"allreduce\"\n", table(step_of_four(0))).empty());
}
