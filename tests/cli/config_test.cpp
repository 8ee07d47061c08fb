// Config parsing: defaults, overrides, the exchange's, checkpoint, robust-aggregation and
// AdamW keys, and each class of error naming file, line and key. Layer lists are in
// config_model_test.cpp, the data splits in config_data_test.cpp.
#define BOOST_TEST_MODULE cli_config
#include <boost/test/unit_test.hpp>

#include "cli/config.h"
#include "cli/config_schema.h"
#include "job/data_partition.h"
#include "job/task_kind.h"
#include "learners/models/model.h"
#include "learners/models/model_description.h"
#include "tests/cli/config_errors.h"
#include "tests/temp_dir.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include <unistd.h>

using namespace starling::cli;
using namespace starling::cli::testing;

BOOST_AUTO_TEST_CASE(defaults_and_values) {
  const Config c = parse_config("[run]\nepochs = 2.5\n[model]\nkind = \"cnn\"\n[optimizer]\nlr = 0.1\nbatch = 8\n", "t");
  BOOST_TEST(c.run.epochs == 2.5);
  BOOST_TEST(c.node.train.epochs == 2.5);
  BOOST_TEST(c.node.train.learner.model.kind == "cnn");
  BOOST_TEST(c.node.train.schedule.lr == 0.1);
  BOOST_TEST(c.node.train.learner.batch == 8);
  BOOST_TEST(c.data.dataset == "fashion-mnist");
  BOOST_TEST((c.node.train.learner.backend == starling::kernels::Backend::native));
}

BOOST_AUTO_TEST_CASE(overrides_take_toml_values_and_bare_strings) {
  const Config c = parse_config("[optimizer]\nlr = 0.1\n", "t",
                                {"optimizer.lr=0.5", "model.hidden=[64, 32]", "data.dataset=synthetic", "kernels.backend=native"});
  BOOST_TEST(c.node.train.schedule.lr == 0.5);
  BOOST_TEST(c.node.train.learner.model.hidden == std::vector<int>({64, 32}), boost::test_tools::per_element());
  BOOST_TEST(c.data.dataset == "synthetic");
  BOOST_TEST((c.node.train.learner.backend == starling::kernels::Backend::native));
}

BOOST_AUTO_TEST_CASE(syntax_error_names_file_and_line) {
  const std::string e = error_of("[run]\nepochs = 2\nseed = = 3\n");
  BOOST_TEST(contains(e, "test.toml:3"), e);
}

BOOST_AUTO_TEST_CASE(unknown_section_and_key) {
  std::string e = error_of("[run]\nepochs = 1\n[bogus]\nx = 1\n");
  BOOST_TEST((contains(e, "test.toml:3") && contains(e, "bogus") && contains(e, "unknown section")), e);
  e = error_of("[optimizer]\nlr = 0.1\nlearning_rate = 0.1\n");
  BOOST_TEST((contains(e, "test.toml:3") && contains(e, "optimizer.learning_rate") && contains(e, "no such key")), e);
}

BOOST_AUTO_TEST_CASE(wrong_types) {
  std::string e = error_of("[optimizer]\nbatch = \"32\"\n");
  BOOST_TEST((contains(e, "test.toml:2") && contains(e, "optimizer.batch") && contains(e, "an integer")), e);
  e = error_of("[optimizer]\nnesterov = 1\n");
  BOOST_TEST((contains(e, "optimizer.nesterov") && contains(e, "true or false")), e);
  e = error_of("[model]\nhidden = 256\n");
  BOOST_TEST((contains(e, "model.hidden") && contains(e, "array")), e);
  e = error_of("run = 3\n");
  BOOST_TEST((contains(e, "run") && contains(e, "table")), e);
}

BOOST_AUTO_TEST_CASE(out_of_range_and_non_finite) {
  BOOST_TEST(contains(error_of("[optimizer]\nlr = 0.0\n"), "optimizer.lr"));
  BOOST_TEST(contains(error_of("[optimizer]\nlr = -1.0\n"), "optimizer.lr"));
  BOOST_TEST(contains(error_of("[optimizer]\nbatch = 0\n"), "optimizer.batch"));
  BOOST_TEST(contains(error_of("[model]\nhidden = [128, -4]\n"), "model.hidden"));
  BOOST_TEST(contains(error_of("[optimizer]\nlr = nan\n"), "optimizer.lr"));
  BOOST_TEST(contains(error_of("[run]\nepochs = inf\n"), "run.epochs"));
  BOOST_TEST(contains(error_of("[run]\ntarget_accuracy = 1.5\n"), "run.target_accuracy"));
  const std::string e = error_of("[optimizer]\nbeta2 = 1.0\n");  // a bound just below 1 is not shown as 1
  BOOST_TEST(contains(e, "optimizer.beta2: expected a number in [0, 0.99999999]"), e);
}

BOOST_AUTO_TEST_CASE(unknown_model_and_dataset) {
  std::string e = error_of("[model]\nkind = \"resnet\"\n");
  BOOST_TEST((contains(e, "test.toml:2") && contains(e, "model.kind") && contains(e, "\"mlp\", \"cnn\"")), e);
  e = error_of("[data]\ndataset = \"cifar\"\n");
  BOOST_TEST((contains(e, "data.dataset") && contains(e, "fashion-mnist")), e);
  for (const std::string set : {"idx", "cifar10"}) {
    e = error_of("[data]\ndataset = \"" + set + "\"\n");
    BOOST_TEST((contains(e, "test.toml") && contains(e, "data.path") && contains(e, set)), e);
  }
  const Config c = parse_config("[data]\ndataset = \"cifar10\"\npath = \"cifar\"\n", "jobs/t.toml");
  BOOST_TEST(c.data.path == "jobs/cifar");  // relative to the config file
}

BOOST_AUTO_TEST_CASE(bad_overrides) {
  BOOST_TEST(contains(error_of("", {"optimizer.lr"}), "section.key=value"));
  BOOST_TEST(contains(error_of("", {"lr=0.1"}), "section.key=value"));
  const std::string e = error_of("", {"optimizer.lr=-3"});
  BOOST_TEST((contains(e, "--set optimizer.lr") && contains(e, "(0")), e);
  BOOST_TEST(contains(error_of("", {"optimizer.momentun=0.5"}), "optimizer.momentun"));
}

BOOST_AUTO_TEST_CASE(peer_overrides_by_index) {
  const std::string two_peers =
      "[exchange]\nmode = \"allreduce\"\n"
      "[[peer]]\nid = 4\nendpoint = \"tcp://127.0.0.1:5600\"\n"
      "[[peer]]\nid = 7\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  const Config c = parse_config(two_peers, "test.toml", {"peer.1.endpoint=tcp://10.77.0.2:5601"});
  BOOST_TEST(c.peers[0].endpoint == "tcp://127.0.0.1:5600");
  BOOST_TEST(c.peers[1].endpoint == "tcp://10.77.0.2:5601");
  BOOST_TEST(c.node.exchange.peers[1].endpoint == "tcp://10.77.0.2:5601");
  BOOST_TEST(contains(error_of(two_peers, {"peer.2.endpoint=tcp://a:1"}), "below the 2 [[peer]] entries"));
  BOOST_TEST(contains(error_of(two_peers, {"peer.endpoint=tcp://a:1"}), "peer.<index>.<key>"));
  BOOST_TEST(contains(error_of(two_peers, {"peer.x.endpoint=tcp://a:1"}), "peer.<index>.<key>"));
  BOOST_TEST(contains(error_of(two_peers, {"peer.0.endpoint=udp://a:1"}), "peer.endpoint"));
  BOOST_TEST(contains(error_of("", {"peer.0.endpoint=tcp://a:1"}), "below the 0 [[peer]] entries"));
}

// [exchange] overlap: strict unless asked, refused where there is no barrier to hide.
BOOST_AUTO_TEST_CASE(exchange_overlap_defaults_per_mode) {
  const std::string peers = "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                            "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  auto overlap = [&](const std::string& mode, const std::vector<std::string>& overrides = {}) {
    return parse_config("[exchange]\nmode = \"" + mode + "\"\n" + peers, "test.toml", overrides).node.overlap;
  };
  BOOST_TEST(!overlap("allreduce"));
  BOOST_TEST(overlap("allreduce", {"exchange.overlap=true"}));
  BOOST_TEST(!overlap("local-sgd"));
  BOOST_TEST(overlap("local-sgd", {"exchange.overlap=true"}));
  BOOST_TEST(overlap("gossip", {"exchange.overlap=true"}));
  BOOST_TEST(!overlap("async-gossip"));
  std::string e = error_of("[exchange]\nmode = \"async-gossip\"\noverlap = true\n" + peers);
  BOOST_TEST((contains(e, "test.toml:3: exchange.overlap: expected false") && contains(e, "async-gossip")), e);
  e = error_of("[exchange]\nmode = \"async-gossip\"\n" + peers, {"exchange.overlap=true"});
  BOOST_TEST((contains(e, "--set exchange.overlap") && contains(e, "expected false")), e);
  // Where the mix lands: inside the period, and only with the overlap.
  BOOST_TEST(parse_config("[exchange]\nmode = \"local-sgd\"\n" + peers, "test.toml", {"exchange.overlap=true",
                          "exchange.overlap_steps=3"}).node.overlap_steps == 3);
  e = error_of("[exchange]\nmode = \"local-sgd\"\noverlap_steps = 3\n" + peers);
  BOOST_TEST((contains(e, "test.toml:3: exchange.overlap_steps: expected only with exchange.overlap = true")), e);
  e = error_of("[exchange]\nmode = \"local-sgd\"\noverlap = true\noverlap_steps = 10\n" + peers);
  BOOST_TEST((contains(e, "test.toml:4: exchange.overlap_steps: expected fewer than exchange.period = 10")), e);
}

// Each key is one row: named once, documented, and its default among its own allowed values.
BOOST_AUTO_TEST_CASE(schema_rows_agree_with_themselves) {
  std::set<std::string> names;
  const std::vector<std::string> sections = config_sections();
  for (const KeySpec& k : config_schema()) {
    BOOST_TEST_CONTEXT(k.name) {
      BOOST_TEST(names.insert(k.name).second);
      BOOST_TEST(std::count(sections.begin(), sections.end(), split_key(k.name).first) == 1);
      BOOST_TEST(!k.doc.empty());
      const KeyType& t = k.type;
      const KeyValue& v = t.fallback;
      if (t.kind == KeyKind::integer || t.kind == KeyKind::integer_or_auto)
        BOOST_TEST((t.int_min <= v.integer && v.integer <= t.int_max));
      if (t.kind == KeyKind::number)
        BOOST_TEST((t.min <= v.number && v.number <= t.max && !(t.open_min && v.number == t.min)));
      if (t.kind == KeyKind::choice) BOOST_TEST(std::count(t.choices.begin(), t.choices.end(), v.text) == 1);
      // A layer list is read by model_config.cpp, a preset acts through the sizes' defaults.
      BOOST_TEST((k.apply != nullptr || k.name == "model.layers" || k.name == "model.preset" || k.name == "security.curve"));
    }
  }
}

// Defaults that follow another key.
BOOST_AUTO_TEST_CASE(dependent_defaults) {
  const std::string peers = "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                            "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  BOOST_TEST(parse_config("[exchange]\nmode = \"local-sgd\"\n" + peers, "t").node.period == 10);
  BOOST_TEST(parse_config("[exchange]\nmode = \"local-sgd\"\nperiod = 3\n" + peers, "t").node.period == 3);
  BOOST_TEST(parse_config("[exchange]\nmode = \"allreduce\"\n" + peers, "t").node.period == 1);
  BOOST_TEST(parse_config("[security]\nkeys_dir = \"k\"\n", "jobs/a.toml").node.exchange.keys_dir.empty());
  BOOST_TEST(parse_config("[security]\ncurve = true\n", "jobs/a.toml").node.exchange.keys_dir == "jobs/keys");
}

BOOST_AUTO_TEST_CASE(peer_entries_name_their_line_and_key) {
  const std::string first = "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n";
  std::string e = error_of(first + "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5601\"\n");
  BOOST_TEST((contains(e, "test.toml:5: peer.id") && contains(e, "appears twice")), e);
  e = error_of(first + "[[peer]]\nendpoint = \"tcp://127.0.0.1:5601\"\n");
  BOOST_TEST((contains(e, "test.toml:4: peer.id") && contains(e, "missing")), e);
  e = error_of(first + "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\nlearner = 2\n");
  BOOST_TEST((contains(e, "test.toml:7: peer.learner") && contains(e, "no such key")), e);
  e = error_of(first + "[[peer]]\nid = -1\nendpoint = \"tcp://127.0.0.1:5601\"\n");
  BOOST_TEST((contains(e, "test.toml:5: peer.id") && contains(e, "an integer in [0, 2147483647]")), e);
}

// The algorithms that carry exact state between rounds and step from the model the last
// round returned refuse lossy codecs and the overlap (which hands that model back one
// exchange late); each names itself in the error.
BOOST_AUTO_TEST_CASE(stateful_algorithms_refuse_codecs_and_overlap) {
  using starling::gossip::ExchangeMode;
  const struct {
    ExchangeMode mode;
    std::string name, topology;
  } algorithms[] = {{ExchangeMode::gradient_tracking, "gradient-tracking", "ring"},
                    {ExchangeMode::push_sum, "push-sum", "one-peer-exponential"},
                    {ExchangeMode::exact_diffusion, "exact-diffusion", "ring"}};
  for (const auto& a : algorithms) {
    BOOST_TEST_CONTEXT(a.name) {
      const std::string config = "[exchange]\nmode = \"" + a.name + "\"\ntopology = \"" + a.topology + "\"\n"
                                 "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                                 "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
      const Config c = parse_config(config, "test.toml");
      BOOST_TEST((c.node.exchange.mode == a.mode));
      BOOST_TEST(c.node.period == 1);
      std::string e = error_of(config + "[compression]\ncodec = \"topk\"\n");
      BOOST_TEST((contains(e, "test.toml:11: compression.codec: expected \"none\"") && contains(e, a.name)), e);
      e = error_of(config, {"exchange.overlap=true"});
      BOOST_TEST((contains(e, "--set exchange.overlap") && contains(e, a.name)), e);
    }
  }
}

// exact-diffusion: its mixing matrix must be symmetric.
BOOST_AUTO_TEST_CASE(exact_diffusion_refuses_directed_graphs) {
  const std::string diffusion = "[exchange]\nmode = \"exact-diffusion\"\n"
                                "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                                "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  const std::string e = error_of(diffusion, {"exchange.topology=\"one-peer-exponential\""});
  BOOST_TEST((contains(e, "--set exchange.topology") && contains(e, "symmetric")), e);
}

// d-cliques: a topology name like the others, its clique size a bounded integer.
BOOST_AUTO_TEST_CASE(d_cliques_takes_a_clique_size) {
  const std::string cliques = "[exchange]\nmode = \"gossip\"\ntopology = \"d-cliques\"\nclique_size = 4\n"
                              "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                              "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  const Config c = parse_config(cliques, "test.toml");
  BOOST_TEST(c.node.exchange.topology == "d-cliques");
  BOOST_TEST(c.node.exchange.clique_size == 4);
  const std::string e = error_of(cliques, {"exchange.clique_size=-1"});
  BOOST_TEST((contains(e, "exchange.clique_size") && contains(e, "0")), e);
}

// exchange.quasi_global_momentum: D-PSGD's, in place of the local momentum, uncompressed, strict.
BOOST_AUTO_TEST_CASE(quasi_global_momentum_is_for_plain_dpsgd) {
  const std::string peers = "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                            "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  const std::string qgm = "[optimizer]\nmomentum = 0\n[exchange]\nmode = \"gossip\"\nquasi_global_momentum = 0.9\n" + peers;
  BOOST_TEST(parse_config(qgm, "test.toml").node.exchange.quasi_global_momentum == 0.9);
  std::string e = error_of(qgm, {"optimizer.momentum=0.5"});
  BOOST_TEST((contains(e, "test.toml:5: exchange.quasi_global_momentum: expected 0") && contains(e, "optimizer.momentum")), e);
  e = error_of(qgm, {"exchange.mode=\"allreduce\""});
  BOOST_TEST((contains(e, "exchange.quasi_global_momentum: expected 0 unless") && contains(e, "gossip")), e);
  e = error_of(qgm, {"compression.codec=\"topk\""});
  BOOST_TEST((contains(e, "--set compression.codec") && contains(e, "expected \"none\" with exchange.quasi_global_momentum")), e);
  e = error_of(qgm, {"exchange.overlap=true"});
  BOOST_TEST((contains(e, "--set exchange.overlap") && contains(e, "expected false") && contains(e, "quasi_global_momentum")), e);
  BOOST_TEST(contains(error_of(qgm, {"exchange.quasi_global_momentum=1"}), "exchange.quasi_global_momentum"));
}

// exchange.slow_peers: "defer" is for the averaging modes' outer step, with the codecs that
// need not every member in every round.
BOOST_AUTO_TEST_CASE(deferring_slow_peers_is_for_allreduce_and_local_sgd) {
  const std::string peers = "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                            "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  const std::string defer = "[exchange]\nmode = \"local-sgd\"\nouter_lr = 0.7\nslow_peers = \"defer\"\n" + peers;
  BOOST_TEST(parse_config(defer, "test.toml").node.exchange.defer_slow_peers);
  BOOST_TEST(!parse_config(defer, "test.toml", {"exchange.slow_peers=\"wait\""}).node.exchange.defer_slow_peers);
  BOOST_TEST(parse_config(defer, "test.toml", {"compression.codec=\"qsgd\"", "compression.bits=4"}).node.exchange.defer_slow_peers);
  std::string e = error_of(defer, {"exchange.mode=\"gossip\""});
  BOOST_TEST((contains(e, "test.toml:4: exchange.slow_peers: expected \"wait\" unless exchange.mode")), e);
  e = error_of(defer, {"compression.codec=\"powersgd\""});
  BOOST_TEST((contains(e, "--set compression.codec") && contains(e, "low-rank")), e);
  e = error_of(defer, {"exchange.overlap=true"});
  BOOST_TEST((contains(e, "--set exchange.overlap") && contains(e, "slow_peers")), e);
  e = error_of(defer, {"exchange.slow_peers=\"later\""});
  BOOST_TEST(contains(e, "exchange.slow_peers"), e);
}

// exchange.outer_*: SlowMo/DiLoCo's outer step on a strict all-reduce, compressed or not,
// or NoLoCo's over gossip.
BOOST_AUTO_TEST_CASE(outer_optimizer_is_for_allreduce_local_sgd_and_gossip) {
  const std::string peers = "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                            "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n";
  const std::string outer = "[exchange]\nmode = \"local-sgd\"\nouter_lr = 0.7\nouter_momentum = 0.9\n" + peers;
  const Config c = parse_config(outer, "test.toml");
  const auto& x = c.node.exchange;
  BOOST_TEST(x.outer_lr == 0.7);
  BOOST_TEST(x.outer_momentum == 0.9);
  BOOST_TEST(x.outer_nesterov);
  BOOST_TEST(!parse_config(outer, "test.toml", {"exchange.mode=\"allreduce\"", "exchange.outer_nesterov=false"})
                  .node.exchange.outer_nesterov);
  std::string e = error_of(outer, {"exchange.mode=\"gradient-tracking\""});
  BOOST_TEST((contains(e, "test.toml:3: exchange.outer_lr: expected only with exchange.mode = \"allreduce\" or \"local-sgd\"")), e);
  e = error_of("[exchange]\nmode = \"gradient-tracking\"\nouter_nesterov = false\n" + peers);
  BOOST_TEST((contains(e, "test.toml:3: exchange.outer_nesterov: expected only with")), e);
  // DiLoCo's pseudo-gradients take a codec: int8, 4-bit, top-k with 2-bit values.
  const Config quantized = parse_config(outer, "test.toml", {"compression.codec=\"qsgd\"", "compression.bits=4"});
  BOOST_TEST(quantized.node.exchange.codec == "qsgd");
  const Config sparse = parse_config(outer, "test.toml", {"compression.codec=\"topk\"", "compression.value_bits=2"});
  BOOST_TEST(sparse.node.exchange.codec_options.get("value_bits", 32) == 2);
  e = error_of(outer, {"compression.codec=\"qsgd\"", "compression.value_bits=2"});
  BOOST_TEST((contains(e, "--set compression.value_bits") && contains(e, "expected only with compression.codec = \"topk\"")), e);
  e = error_of(outer, {"compression.codec=\"topk\"", "compression.value_bits=4"});
  BOOST_TEST((contains(e, "compression.value_bits") && contains(e, "expected 32 or 2")), e);
  e = error_of(outer, {"compression.codec=\"topk\"", "compression.adaptive=true"});
  BOOST_TEST((contains(e, "--set compression.adaptive") && contains(e, "expected false with an outer optimizer")), e);
  // Over gossip it is NoLoCo's, with a random partner: no topology, codec or D-PSGD momentum.
  BOOST_TEST((parse_config(outer, "test.toml", {"exchange.mode=\"gossip\""}).node.exchange.mode == starling::gossip::ExchangeMode::gossip));
  e = error_of(outer, {"exchange.mode=\"gossip\"", "exchange.topology=\"ring\""});
  BOOST_TEST((contains(e, "--set exchange.topology") && contains(e, "NoLoCo")), e);
  e = error_of(outer, {"exchange.mode=\"gossip\"", "compression.codec=\"topk\""});
  BOOST_TEST((contains(e, "--set compression.codec") && contains(e, "NoLoCo")), e);
  e = error_of(outer, {"exchange.mode=\"gossip\"", "exchange.outer_nesterov=false"});
  BOOST_TEST((contains(e, "--set exchange.outer_nesterov") && contains(e, "expected only with")), e);
  // The outer step takes the overlap (its pseudo-gradients are taken against its own x₀), as
  // NoLoCo's does (stateful_algorithms_refuse_codecs_and_overlap has those that refuse it).
  BOOST_TEST(parse_config(outer, "test.toml", {"exchange.overlap=true"}).node.overlap);
  BOOST_TEST(parse_config(outer, "test.toml", {"exchange.overlap=true", "exchange.mode=\"gossip\""}).node.overlap);
  // Without an outer step (α = 1, β = 0) codecs and overlap stay as they were.
  BOOST_TEST(parse_config(outer, "test.toml", {"exchange.outer_lr=1", "exchange.outer_momentum=0", "compression.codec=\"fp16\""})
                 .node.exchange.codec == "fp16");
  BOOST_TEST(contains(error_of(outer, {"exchange.outer_lr=0"}), "exchange.outer_lr"));
  BOOST_TEST(contains(error_of(outer, {"exchange.outer_momentum=1"}), "exchange.outer_momentum"));
  BOOST_TEST(contains(error_of(outer, {"exchange.outer_lr=nan"}), "exchange.outer_lr"));
}

// A codec's options are the keys of its row (protocols/codec_row.h): another codec's are
// refused, each is checked in the codec's own range and rules, and a key it sets reaches the
// codec while one left out keeps the codec's default.
BOOST_AUTO_TEST_CASE(codec_options_are_the_codecs_own) {
  const std::string config = "[exchange]\nmode = \"allreduce\"\n"
                             "[[peer]]\nid = 0\nendpoint = \"tcp://127.0.0.1:5600\"\n"
                             "[[peer]]\nid = 1\nendpoint = \"tcp://127.0.0.1:5601\"\n"
                             "[compression]\n";
  const auto& qsgd = parse_config(config + "codec = \"qsgd\"\nbits = 4\n", "test.toml").node.exchange.codec_options;
  BOOST_TEST(qsgd.get("bits", 0) == 4);
  BOOST_TEST(!qsgd.find("bucket"));
  std::string e = error_of(config + "codec = \"topk\"\nbits = 4\n");
  BOOST_TEST(contains(e, "test.toml:11: compression.bits: expected only with compression.codec = \"qsgd\""), e);
  e = error_of(config + "codec = \"sign\"\nbucket = 12\n");
  BOOST_TEST(contains(e, "test.toml:11: compression.bucket: expected a multiple of 8 with compression.codec = \"sign\""), e);
  e = error_of(config + "codec = \"topk\"\ndensity = 0\n");
  BOOST_TEST(contains(e, "test.toml:11: compression.density: expected a number in (0, 1] with compression.codec = \"topk\""), e);
  // threshold's density 0 holds τ fixed.
  BOOST_TEST(parse_config(config + "codec = \"threshold\"\ndensity = 0\n", "test.toml").node.exchange.codec == "threshold");
  e = error_of(config + "codec = \"qsgd\"\nadaptive = true\n");
  BOOST_TEST(contains(e, "compression.adaptive: needs a codec with a density (\"threshold\" or \"topk\")"), e);
}

BOOST_AUTO_TEST_CASE(shipped_configs_load) {
  const char* root = std::getenv("STARLING_SOURCE_DIR");
  BOOST_REQUIRE(root);
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(root) + "/configs")) {
    if (entry.path().extension() != ".toml") continue;
    BOOST_TEST_CONTEXT(entry.path().filename()) {
      const Config c = load_config(entry.path().string());
      BOOST_TEST(starling::job::task_kind(c.data).target(c) > 0.0);
      ++count;
    }
  }
  BOOST_TEST(count >= 8);
  BOOST_CHECK_THROW(load_config(std::string(root) + "/configs/no-such.toml"), ConfigError);
}

BOOST_AUTO_TEST_CASE(checkpoint_keys) {
  const Config off = parse_config("", "jobs/a.toml");
  BOOST_TEST(off.node.checkpoint_dir.empty());
  BOOST_TEST(off.node.checkpoint_every == 0);
  BOOST_TEST(off.node.checkpoint_keep == 3);
  // A relative folder is relative to the config file, like security.keys_dir.
  const Config c = parse_config("[run]\ncheckpoint_dir = \"ckpt\"\ncheckpoint_every = 500\ncheckpoint_keep = 2\n", "jobs/a.toml");
  BOOST_TEST(c.node.checkpoint_dir == "jobs/ckpt");
  BOOST_TEST(c.node.checkpoint_every == 500);
  BOOST_TEST(c.node.checkpoint_keep == 2);
  BOOST_TEST(parse_config("[run]\ncheckpoint_dir = \"/var/ckpt\"\n", "jobs/a.toml").node.checkpoint_dir == "/var/ckpt");
  BOOST_TEST(contains(error_of("[run]\ncheckpoint_every = 100\n"), "run.checkpoint_every: needs run.checkpoint_dir"));
  BOOST_TEST(contains(error_of("[run]\ncheckpoint_every = -1\n"), "test.toml:2: run.checkpoint_every"));
  BOOST_TEST(contains(error_of("[run]\ncheckpoint_dir = 3\n"), "run.checkpoint_dir: expected a string"));
  BOOST_TEST(contains(error_of("[run]\ncheckpoint_keep = 0\n"), "run.checkpoint_keep"));
}

// Robust aggregation and attacking peers (docs/byzantine.md): their values, and every bad
// one a ConfigError naming file:line:key.
BOOST_AUTO_TEST_CASE(robust_aggregation_and_attackers) {
  std::string peers;
  for (int k = 0; k < 8; ++k)
    peers += "[[peer]]\nid = " + std::to_string(k) + "\nendpoint = \"tcp://127.0.0.1:" + std::to_string(5600 + k) +
             "\"\n" + (k >= 6 ? "attack = \"ipm\"\nattack_scale = 0.5\n" : "");
  const std::string clipped = "[exchange]\nmode = \"gossip\"\ntopology = \"complete\"\naggregator = \"clipped\"\n"
                              "clip_radius = 2.5\n" + peers;
  const Config c = parse_config(clipped, "test.toml");
  BOOST_TEST((c.node.exchange.aggregator.kind == starling::gossip::Aggregator::clipped));
  BOOST_TEST(c.node.exchange.aggregator.clip_radius == 2.5);
  BOOST_TEST((c.peers[6].attack.kind == starling::gossip::Attack::ipm));
  BOOST_TEST(c.node.exchange.peers[7].attack.scale == 0.5);
  BOOST_TEST(!c.peers[0].attack.on());
  BOOST_TEST(parse_config(clipped, "test.toml", {"exchange.clip_radius=\"adaptive\""}).node.exchange.aggregator.clip_radius == 0.0);
  // A negative or non-finite radius, or a word other than "adaptive".
  std::string e = error_of(clipped, {"exchange.clip_radius=-1"});
  BOOST_TEST(contains(e, "--set exchange.clip_radius"), e);
  e = error_of("[exchange]\nmode = \"gossip\"\naggregator = \"clipped\"\nclip_radius = nan\n" + peers);
  BOOST_TEST((contains(e, "test.toml:4: exchange.clip_radius")), e);
  e = error_of("[exchange]\nmode = \"gossip\"\naggregator = \"clipped\"\nclip_radius = -0.5\n" + peers);
  BOOST_TEST((contains(e, "test.toml:4: exchange.clip_radius")), e);
  e = error_of(clipped, {"exchange.clip_radius=\"auto\""});
  BOOST_TEST(contains(e, "exchange.clip_radius"), e);
  // A trim of at least half the neighbours (a ring has two).
  const std::string trimmed = "[exchange]\nmode = \"gossip\"\naggregator = \"trimmed-mean\"\ntrim = 1\n" + peers;
  e = error_of(trimmed);
  BOOST_TEST((contains(e, "test.toml:4: exchange.trim") && contains(e, "half the 2 neighbours")), e);
  BOOST_TEST(error_of(trimmed, {"exchange.topology=\"complete\""}).empty());
  e = error_of(trimmed, {"exchange.topology=\"complete\"", "exchange.trim=4"});
  BOOST_TEST(contains(e, "exchange.trim"), e);
  // A robust aggregator or an attacker under a mode without robust aggregation.
  e = error_of(clipped, {"exchange.mode=\"allreduce\""});
  BOOST_TEST((contains(e, "test.toml:4: exchange.aggregator") && contains(e, "expected \"mean\"")), e);
  e = error_of("[exchange]\nmode = \"async-gossip\"\n" + peers);
  BOOST_TEST((contains(e, "peer.attack") && contains(e, "D-PSGD")), e);
  e = error_of(clipped, {"compression.codec=\"topk\""});
  BOOST_TEST((contains(e, "exchange.aggregator") && contains(e, "without a codec")), e);
  // More attackers than the topology can place: on a ring, peer 7 between two attackers.
  std::string crowded;
  for (int k = 0; k < 4; ++k)
    crowded += "[[peer]]\nid = " + std::to_string(k) + "\nendpoint = \"tcp://127.0.0.1:" + std::to_string(5600 + k) +
               "\"\n" + (k % 2 == 1 ? "attack = \"dissensus\"\n" : "");
  e = error_of("[exchange]\nmode = \"gossip\"\n" + crowded);
  BOOST_TEST((contains(e, "peer.attack") && contains(e, "more attackers than \"ring\" can place")), e);
  // A key of one aggregator under another.
  e = error_of(clipped, {"exchange.aggregator=\"median\""});
  BOOST_TEST(contains(e, "exchange.clip_radius: expected only with"), e);
}

BOOST_AUTO_TEST_CASE(adamw_keys_and_their_errors) {
  const Config c = parse_config("[optimizer]\nkind = \"adamw\"\nlr = 1e-3\nbeta2 = 0.99\nweight_decay = 0.1\n"
                                "clip_norm = 0.5\nschedule = \"cosine\"\nmin_lr = 1e-4\nwarmup_steps = 100\n",
                                "t");
  const auto& o = c.node.train.learner.optimizer;
  BOOST_TEST(o.kind == "adamw");
  BOOST_TEST(o.beta2 == 0.99);
  BOOST_TEST(o.clip_norm == 0.5);
  BOOST_TEST(c.node.train.schedule.min_lr == 1e-4);
  BOOST_TEST(parse_config("[optimizer]\nkind = \"adamw\"\n", "t").node.train.learner.optimizer.clip_norm == 1.0);
  std::string e = error_of("[optimizer]\nkind = \"adamw\"\nclip_norm = 0\n");
  BOOST_TEST(contains(e, "test.toml:3: optimizer.clip_norm"), e);
  e = error_of("[optimizer]\nkind = \"adamw\"\nclip_norm = -1\n");
  BOOST_TEST(contains(e, "test.toml:3: optimizer.clip_norm"), e);
  e = error_of("[optimizer]\nkind = \"adam\"\nclip_norm = 1\n");
  BOOST_TEST((contains(e, "test.toml:3: optimizer.clip_norm") && contains(e, "adamw")), e);
  for (const char* beta : {"beta1 = 1.0", "beta1 = -0.1", "beta2 = 1.0"}) {
    e = error_of(std::string("[optimizer]\nkind = \"adamw\"\n") + beta + "\n");
    BOOST_TEST(contains(e, "test.toml:3: optimizer.beta"), e);
  }
  e = error_of("[optimizer]\nschedule = \"cosine\"\nlr = 0.01\nmin_lr = 0.1\n");
  BOOST_TEST((contains(e, "test.toml:4: optimizer.min_lr") && contains(e, "above optimizer.lr")), e);
  e = error_of("[optimizer]\nmin_lr = 0.001\n");
  BOOST_TEST((contains(e, "test.toml:2: optimizer.min_lr") && contains(e, "cosine")), e);
}

// node.slowdown (docs/swarm.md#slow-peers): a factor of at least 1, settable per peer with
// --set; anything else names file, line and key.
BOOST_AUTO_TEST_CASE(slowdown_emulates_a_slower_cpu) {
  BOOST_TEST(parse_config("", "t").node.slowdown == 1.0);
  BOOST_TEST(parse_config("[node]\nslowdown = 4\n", "t").node.slowdown == 4.0);
  BOOST_TEST(parse_config("[node]\nslowdown = 2.5\n", "t", {"node.slowdown=4"}).node.slowdown == 4.0);
  std::string e = error_of("[run]\nseed = 1\n[node]\nslowdown = 0.5\n");
  BOOST_TEST((contains(e, "test.toml:4: node.slowdown") && contains(e, "[1, 1000]")), e);
  e = error_of("[node]\nslowdown = \"4\"\n");
  BOOST_TEST((contains(e, "test.toml:2: node.slowdown") && contains(e, "a number")), e);
  e = error_of("", {"node.slowdown=-2"});
  BOOST_TEST(contains(e, "--set node.slowdown"), e);
}

// A swarm compares job descriptions (docs/swarm.md): every key but the per-peer ones, after
// defaults and overrides; a per-peer key (where files lie, threads) never makes two peers'
// jobs differ.
BOOST_AUTO_TEST_CASE(job_descriptions_leave_out_the_per_peer_keys) {
  starling::testing::TempDir dir("job-description");
  const std::string path = dir.file("job.toml");
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("[optimizer]\nlr = 0.05\n[run]\nout_dir = \"here\"\n", f);
  std::fclose(f);
  const std::string job = job_description(path, {});
  BOOST_TEST(job.find("optimizer.lr=0.05\n") != std::string::npos);
  BOOST_TEST(job.find("model.kind=") != std::string::npos);
  BOOST_TEST(job.find("run.out_dir") == std::string::npos);
  BOOST_TEST(job.find("kernels.threads") == std::string::npos);
  BOOST_TEST(job.find("peer.") == std::string::npos);
  BOOST_TEST(job_description(path, {"run.out_dir=elsewhere", "kernels.threads=2", "node.threads=3", "node.slowdown=4"}) == job);
  BOOST_TEST(job_description(path, {"optimizer.lr=0.2"}) != job);
  for (const KeySpec& k : config_schema())
    if (k.name == "run.out_dir" || k.name == "monitor.metrics_port" || k.name == "swarm.join_timeout_seconds")
      BOOST_TEST(k.per_peer, k.name);
    else if (k.name == "model.hidden" || k.name == "exchange.mode" || k.name == "swarm.owner_key" || k.name == "swarm.data_parts")
      BOOST_TEST(!k.per_peer, k.name);
}
