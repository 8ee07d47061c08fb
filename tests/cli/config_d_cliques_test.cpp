// D-Cliques and Clique Averaging in the config: the keys, SGD's momentum moved onto the
// clique's mean change, what the mode refuses, and the cliques a split by class must allow,
// each a config error naming file:line:key.
#define BOOST_TEST_MODULE cli_config_d_cliques
#include <boost/test/unit_test.hpp>

#include "cli/config.h"
#include "job/data_partition.h"
#include "learners/data/dataset.h"
#include "tests/cli/config_errors.h"

#include <string>

using namespace starling::cli;
using namespace starling::job;
using namespace starling::cli::testing;

namespace {

// `peers` [[peer]] entries on loopback.
std::string peers(int count) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += "[[peer]]\nid = " + std::to_string(i) + "\nendpoint = \"tcp://127.0.0.1:" + std::to_string(7000 + i) + "\"\n";
  return text;
}

const std::string kAveraging = "[optimizer]\nmomentum = 0.8\nnesterov = true\n[exchange]\nmode = \"clique-averaging\"\n";

// The error of giving `c` its partition of synthetic data (10 classes), or "".
std::string partition_error_of(Config c) {
  const auto data = starling::make_synthetic(static_cast<uint32_t>(c.data.synthetic_train), 10, c.run.seed);
  try {
    assign_partition(c, data.train);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

Config cliques_job(int count, const std::string& data, const std::string& exchange) {
  return parse_config("[data]\ndataset = \"synthetic\"\nsynthetic_train = 2000\n" + data + "[exchange]\n" + exchange + peers(count),
                      "job.toml");
}

}  // namespace

BOOST_AUTO_TEST_CASE(clique_averaging_takes_sgds_momentum_onto_the_cliques_mean) {
  const Config c = parse_config(kAveraging + peers(4), "test.toml");
  BOOST_TEST((c.node.exchange.mode == starling::gossip::ExchangeMode::clique_averaging));
  BOOST_TEST(c.node.exchange.topology == "d-cliques");  // its default
  BOOST_TEST(c.node.exchange.clique_momentum == 0.8);
  BOOST_TEST(c.node.exchange.clique_nesterov);
  BOOST_TEST(c.node.train.learner.optimizer.momentum == 0.0);  // the local steps are plain SGD
  BOOST_TEST(!c.node.train.learner.optimizer.nesterov);
  BOOST_TEST((c.node.exchange.inter_clique == starling::gossip::InterClique::fully_connected));
  // Other modes keep the local momentum.
  const Config gossip = parse_config(kAveraging + peers(4), "test.toml", {"exchange.mode=\"gossip\""});
  BOOST_TEST(gossip.node.train.learner.optimizer.momentum == 0.8);
  BOOST_TEST(gossip.node.exchange.clique_momentum == 0.0);
  const Config world = parse_config(kAveraging + "inter_clique = \"small-world\"\n" + peers(4), "test.toml");
  BOOST_TEST((world.node.exchange.inter_clique == starling::gossip::InterClique::small_world));
}

BOOST_AUTO_TEST_CASE(bad_inter_clique_and_averaging_keys_name_file_line_and_key) {
  std::string e = error_of(kAveraging + "inter_clique = \"smallworld\"\n" + peers(4));
  BOOST_TEST((contains(e, "test.toml:6: exchange.inter_clique") && contains(e, "\"fully-connected\", \"small-world\"")), e);
  e = error_of("[exchange]\nmode = \"gossip\"\ninter_clique = \"small-world\"\n" + peers(4));
  BOOST_TEST((contains(e, "test.toml:3: exchange.inter_clique") && contains(e, "d-cliques")), e);
  e = error_of(kAveraging + "topology = \"ring\"\n" + peers(4));
  BOOST_TEST((contains(e, "test.toml:6: exchange.topology") && contains(e, "\"d-cliques\"")), e);
  e = error_of(kAveraging + peers(4), {"optimizer.kind=\"adamw\""});
  BOOST_TEST((contains(e, "optimizer.kind") && contains(e, "\"sgd\"")), e);
  e = error_of(kAveraging + "overlap = true\n" + peers(4));
  BOOST_TEST((contains(e, "test.toml:6: exchange.overlap") && contains(e, "clique-averaging")), e);
  e = error_of(kAveraging + peers(4), {"compression.codec=\"topk\""});
  BOOST_TEST((contains(e, "compression.codec") && contains(e, "clique-averaging")), e);
  e = error_of(kAveraging + "aggregator = \"median\"\n" + peers(4));
  BOOST_TEST(contains(e, "test.toml:6: exchange.aggregator"), e);
}

// One class a peer: cliques of ten can each hold all ten classes; cliques of eight cannot,
// and the error names the clique's peers and the classes it lacks.
BOOST_AUTO_TEST_CASE(a_clique_without_a_class_under_a_split_by_class_is_named) {
  const std::string shards = "partition = \"shards\"\nclasses_per_peer = 1\n";
  BOOST_TEST(partition_error_of(cliques_job(20, shards, "mode = \"clique-averaging\"\n")).empty());
  const Config eights = cliques_job(16, shards, "mode = \"clique-averaging\"\nclique_size = 8\n");
  const std::string e = partition_error_of(eights);
  BOOST_TEST((contains(e, "job.toml:8: exchange.clique_size") && contains(e, "of 2 (peers ") &&
              contains(e, "without classes ") && contains(e, "\"shards\" split")), e);
  // Plain D-PSGD on D-Cliques is held to the same, and a Dirichlet split is not checked.
  BOOST_TEST(!partition_error_of(cliques_job(16, shards, "mode = \"gossip\"\ntopology = \"d-cliques\"\nclique_size = 8\n")).empty());
  BOOST_TEST(partition_error_of(cliques_job(16, "partition = \"dirichlet\"\nalpha = 0.1\n", "mode = \"clique-averaging\"\n")).empty());
}

// A clique size above the peer count: one clique of every peer, which holds every class.
BOOST_AUTO_TEST_CASE(a_clique_size_above_the_peers_is_one_clique) {
  Config c = cliques_job(6, "partition = \"shards\"\nclasses_per_peer = 2\n", "mode = \"clique-averaging\"\nclique_size = 50\n");
  BOOST_TEST(partition_error_of(c).empty());
  const auto data = starling::make_synthetic(2000, 10, c.run.seed);
  assign_partition(c, data.train);
  BOOST_TEST(c.node.exchange.clique_size == 50);
  BOOST_TEST(c.node.exchange.label_counts.size() == 6u);
}
