// The memory estimate made before a model is allocated (learners/models/model_memory.h): its
// parameter counts against the models actually built, and the config error it gives a model
// too large for this machine.
#define BOOST_TEST_MODULE model_memory
#include <boost/test/unit_test.hpp>

#include "cli/config.h"
#include "learners/models/gpt.h"
#include "learners/models/model_memory.h"

#include <cmath>

using namespace starling;
using namespace starling::cli;

namespace {

double estimated_parameters(const ModelSpec& spec) {
  double sum = 0;
  for (const PartMemory& p : estimate_memory(spec)) sum += p.parameters;
  return sum;
}

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "big.toml", {});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(parameters_match_the_models_built) {
  ModelSpec mlp, cnn, resnet8, gpt, small_gpt;
  cnn.kind = "cnn";
  resnet8.kind = "resnet8";
  gpt.kind = kGptKind;
  gpt.input = Shape{1, gpt.context, 1};
  gpt.classes = 256;
  small_gpt = gpt;
  small_gpt.blocks = 2, small_gpt.heads = 3, small_gpt.width = 24, small_gpt.context = 7;
  small_gpt.input = Shape{1, 7, 1};
  for (const ModelSpec* spec : {&mlp, &cnn, &resnet8, &gpt})
    BOOST_TEST(estimated_parameters(*spec) == static_cast<double>(Model(*spec).trainable_count()), spec->kind);
  // Widths that are not a multiple of 16 floats leave some of the arena's padding in the count.
  const double built = static_cast<double>(Model(small_gpt).trainable_count());
  BOOST_TEST(std::abs(estimated_parameters(small_gpt) - built) <= 0.01 * built);
}

BOOST_AUTO_TEST_CASE(the_largest_part_is_named) {
  ModelSpec spec;
  spec.hidden = {4096, 16};
  const std::vector<PartMemory> parts = estimate_memory(spec);  // flatten, dense, relu, dense, relu, dense
  BOOST_REQUIRE(parts.size() == 6);
  const PartMemory& first = parts[1];
  BOOST_TEST(first.key == "hidden");
  BOOST_TEST(first.parameters == 784.0 * 4096 + 4096);
  BOOST_TEST(parts.back().key == "kind");  // the output layer's size comes from the data
  const MemoryUse use{32, 2, 2, 2, 250};
  // Two learners with Adam: weights, gradients, 2 moments each, plus the node's central
  // model, its gradients, z_prev, the scratch arena and its own 2 moments (synchronous SGD);
  // activations and their gradients for 32 samples on each learner and 250 validated at once.
  BOOST_TEST(use.part_bytes(first) == 4.0 * (first.parameters * 14 + 4096.0 * 2 * (32 * 2 + 250)));
}

BOOST_AUTO_TEST_CASE(a_model_larger_than_memory_is_a_config_error_at_its_layer) {
  const std::string e = error_of(
      "[model]\nlayers = [\n  { kind = \"dense\", size = 1000000 },\n  { kind = \"dense\", size = 1000000 },\n"
      "  { kind = \"dense\", size = 10 },\n]\n");
  BOOST_TEST(contains(e, "big.toml:4: model.layers[1]: dense of 1000000 units on 1000000 inputs needs about"), e);
  BOOST_TEST(contains(e, "TiB"), e);
  BOOST_TEST(contains(e, "of memory"), e);
  const std::string hidden = error_of("[model]\nhidden = [200000, 200000]\n");
  BOOST_TEST(contains(hidden, "big.toml:2: model.hidden: dense of 200000 units on 200000 inputs"), hidden);
  const std::string gpt = error_of("[data]\ndataset = \"text\"\npath = \"x\"\n[model]\nkind = \"gpt\"\nwidth = 65536\nheads = 4\n");
  BOOST_TEST(contains(gpt, "model.blocks: 4 blocks of width 65536 needs about"), gpt);
  BOOST_TEST(error_of("[model]\nhidden = [4096, 4096]\n") == "");
}
