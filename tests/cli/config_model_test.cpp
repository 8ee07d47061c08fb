// Config layer lists (`[[model.layers]]`, and the presets written out as them): what they
// build, and their bad values naming file:line:key.
#define BOOST_TEST_MODULE cli_config_model
#include <boost/test/unit_test.hpp>

#include "cli/config.h"
#include "cli/config_schema.h"
#include "job/data_partition.h"
#include "learners/models/gpt.h"
#include "learners/models/model.h"
#include "learners/models/model_description.h"
#include "learners/models/model_export.h"
#include "tests/cli/config_errors.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include <unistd.h>

using namespace starling::cli;
using namespace starling::cli::testing;

namespace {

const char* const kCnnLayers = R"([model]
layers = [
  { kind = "conv2d", size = 32, kernel = 5 },
  { kind = "relu" },
  { kind = "maxpool2d", kernel = 2 },
  { kind = "conv2d", size = 64, kernel = 5 },
  { kind = "relu" },
  { kind = "maxpool2d", kernel = 2 },
  { kind = "flatten" },
  { kind = "dense", size = 128 },
  { kind = "relu" },
  { kind = "dense", size = 10 },
]
)";

// The CNN list with line `line` (1-based, counting "[model]") replaced.
std::string cnn_with(int line, const std::string& replacement) {
  std::string text = kCnnLayers, out;
  std::size_t start = 0;
  for (int n = 1; start < text.size(); ++n) {
    const std::size_t end = text.find('\n', start);
    out += (n == line ? replacement : text.substr(start, end - start)) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_layer_list_builds_the_preset_it_spells_out) {
  const Config listed = parse_config(kCnnLayers, "t");
  const Config preset = parse_config("[model]\nkind = \"cnn\"\n", "t");
  BOOST_TEST(listed.node.train.learner.model.kind == "layers");
  starling::Model a(listed.node.train.learner.model), b(preset.node.train.learner.model);
  BOOST_REQUIRE(a.param_count() == b.param_count());
  BOOST_TEST(a.signature() == b.signature());
  a.init(7);
  b.init(7);
  BOOST_TEST(std::memcmp(a.params(), b.params(), a.param_count() * sizeof(float)) == 0);
}

BOOST_AUTO_TEST_CASE(bad_layer_lists_name_the_line_and_key) {
  std::string e = error_of(cnn_with(3, "  { kind = \"conv3d\", size = 32, kernel = 5 },"));
  BOOST_TEST((contains(e, "test.toml:3") && contains(e, "model.layers[0].kind") && contains(e, "conv2d")), e);
  e = error_of(cnn_with(5, "  { kind = \"maxpool2d\", kernel = 0 },"));
  BOOST_TEST((contains(e, "test.toml:5") && contains(e, "model.layers[2].kernel")), e);
  e = error_of(cnn_with(6, "  { kind = \"conv2d\", size = -4, kernel = 5 },"));
  BOOST_TEST((contains(e, "test.toml:6") && contains(e, "model.layers[3].size")), e);
  e = error_of(cnn_with(6, "  { kind = \"conv2d\", size = 64, kernel = 13 },"));  // 12x12 input
  BOOST_TEST((contains(e, "test.toml:6") && contains(e, "model.layers[3].kernel") && contains(e, "larger")), e);
  e = error_of(cnn_with(12, "  { kind = \"dense\", size = 7 },"));
  BOOST_TEST((contains(e, "test.toml:12") && contains(e, "model.layers[9].size") && contains(e, "class")), e);
  e = error_of(cnn_with(5, "  { kind = \"maxpool2d\", kernel = 2, padding = 1 },"));  // pools take no padding
  BOOST_TEST((contains(e, "test.toml:5") && contains(e, "model.layers[2].padding") && contains(e, "no such key")), e);
  BOOST_TEST(error_of(cnn_with(5, "  { kind = \"avgpool2d\", kernel = 2 },")) == "");
  BOOST_TEST(error_of(cnn_with(11, "  { kind = \"dropout\", rate = 0.5 },")) == "");  // in place of a relu
  e = error_of(cnn_with(11, "  { kind = \"dropout\", rate = 1.0 },"));
  BOOST_TEST((contains(e, "test.toml:11") && contains(e, "model.layers[8].rate")), e);
  e = error_of(cnn_with(11, "  { kind = \"dropout\" },"));
  BOOST_TEST((contains(e, "model.layers[8].rate")), e);
  e = error_of(cnn_with(4, "  { kind = \"relu\", size = 3 },"));
  BOOST_TEST((contains(e, "test.toml:4") && contains(e, "model.layers[1].size") && contains(e, "no such key")), e);
  e = error_of(cnn_with(4, "  { kind = \"conv2d\", kernel = 3 },"));
  BOOST_TEST((contains(e, "model.layers[1].size")), e);
  e = error_of(std::string(kCnnLayers) + "kind = \"cnn\"\n");
  BOOST_TEST((contains(e, "test.toml:14") && contains(e, "model.kind") && contains(e, "beside model.layers")), e);
  e = error_of("[model]\nlayers = []\n");
  BOOST_TEST((contains(e, "test.toml:2") && contains(e, "model.layers") && contains(e, "non-empty")), e);
  e = error_of("[model]\nlayers = [\"relu\"]\n");
  BOOST_TEST((contains(e, "model.layers[0]") && contains(e, "table")), e);
  // Residual blocks: nested errors name the block's line and the path inside it.
  const std::string block = "[model]\nlayers = [\n  { kind = \"conv2d\", size = 8, kernel = 3, padding = 1 },\n"
                            "  { kind = \"residual\", body = [{ kind = \"conv2d\", size = 16, kernel = 3, stride = 2, padding = 1 },"
                            " { kind = \"groupnorm\", groups = GROUPS }]SHORTCUT },\n"
                            "  { kind = \"global_avgpool\" },\n  { kind = \"dense\", size = 10 },\n]\n";
  auto with = [&](const std::string& groups, const std::string& shortcut) {
    std::string text = block;
    text.replace(text.find("GROUPS"), 6, groups);
    text.replace(text.find("SHORTCUT"), 8, shortcut);
    return text;
  };
  const std::string projection = ", shortcut = [{ kind = \"conv2d\", size = 16, kernel = 1, stride = 2, bias = false }]";
  BOOST_TEST(error_of(with("4", projection)) == "");
  e = error_of(with("3", projection));
  BOOST_TEST((contains(e, "test.toml:4") && contains(e, "model.layers[1].body[1].groups") && contains(e, "divide")), e);
  e = error_of(with("4", ""));
  BOOST_TEST((contains(e, "test.toml:4") && contains(e, "model.layers[1].shortcut") && contains(e, "projection")), e);
  // Written as arrays of tables, a nested entry has a line of its own, and the error names it.
  e = error_of("[[model.layers]]\nkind = \"conv2d\"\nsize = 8\nkernel = 3\npadding = 1\n"
               "[[model.layers]]\nkind = \"residual\"\n"
               "[[model.layers.body]]\nkind = \"conv2d\"\nsize = 8\nkernel = 3\npadding = 1\n"
               "[[model.layers.body]]\nkind = \"groupnorm\"\ngroups = 3\n"
               "[[model.layers]]\nkind = \"global_avgpool\"\n[[model.layers]]\nkind = \"dense\"\nsize = 10\n");
  BOOST_TEST((contains(e, "test.toml:13: model.layers[1].body[1].groups") && contains(e, "divide")), e);
  e = error_of(with("4", ", shortcut = [{ kind = \"conv2d\", size = 16, kernel = 1, stride = 2, bais = false }]"));
  BOOST_TEST((contains(e, "model.layers[1].shortcut[0].bais") && contains(e, "no such key")), e);
  // CIFAR-10's 32x32x3 input: the same list fits (conv5 -> 28, pool -> 14, conv5 -> 10, pool -> 5).
  BOOST_TEST(error_of(std::string(kCnnLayers) + "[data]\ndataset = \"cifar10\"\npath = \"x\"\n") == "");
}

// The GPT preset written out as its layer list (`starling model --layers`) and read back
// builds the same model: the same arena, the same initial bits, the same logits and
// gradients; with each of its MLPs (model.mlp).
BOOST_AUTO_TEST_CASE(the_gpt_written_as_a_layer_list_is_the_preset) {
  for (const std::string mlp : {"gelu", "swiglu"}) {
    using starling::Model;
    const std::string data = "[data]\ndataset = \"text\"\npath = \"text\"\n";
    const Config preset = parse_config(data + "[model]\nkind = \"gpt\"\nblocks = 2\nheads = 2\nwidth = 16\ncontext = 8\n" +
                                           "mlp = \"" + mlp + "\"\n",
                                       "gpt.toml");
    BOOST_TEST(preset.node.train.learner.model.mlp == mlp);
    const starling::ModelSpec& gpt = preset.node.train.learner.model;
    const Config listed = parse_config(data + starling::layers_toml(gpt), "list.toml");
    const starling::ModelSpec& list = listed.node.train.learner.model;
    BOOST_TEST(list.kind == "layers");
    BOOST_TEST(list.context == 8);
    Model a(gpt), b(list);
    BOOST_TEST(a.param_count() == b.param_count());
    BOOST_TEST(a.signature() == b.signature());
    a.init(7), b.init(7);
    BOOST_TEST(starling::checksum_hex(a.params(), a.param_count()) == starling::checksum_hex(b.params(), b.param_count()));
    const int batch = 2, outputs = batch * 8 * 256;
    std::vector<float> ids(batch * 8), dlogits(outputs);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<float>((i * 37) % 256);
    const auto backend = starling::kernels::Backend::native;
    const std::vector<float> ya(a.forward(backend, batch, ids.data()), a.forward(backend, batch, ids.data()) + outputs);
    const float* yb = b.forward(backend, batch, ids.data());
    BOOST_TEST(std::memcmp(ya.data(), yb, sizeof(float) * outputs) == 0);
    for (int i = 0; i < outputs; ++i) dlogits[i] = ya[i] * 1e-3f;
    a.forward(backend, batch, ids.data());  // a's activations, for its backward
    a.backward(backend, batch, ids.data(), dlogits.data());
    b.backward(backend, batch, ids.data(), dlogits.data());
    BOOST_TEST(starling::checksum_hex(a.grads(), a.param_count()) == starling::checksum_hex(b.grads(), b.param_count()));
  }
}

// model.preset sets the GPT's sizes where the config does not; keys beside it win, and an
// unknown preset or one on another kind names its line and key.
BOOST_AUTO_TEST_CASE(gpt_presets_set_the_sizes_the_config_leaves) {
  using starling::cli::testing::contains;
  using starling::cli::testing::error_of;
  const std::string data = "[data]\ndataset = \"text\"\npath = \"text\"\n";
  const starling::ModelSpec ten = parse_config(data + "[model]\npreset = \"gpt-10m\"\n", "t").node.train.learner.model;
  BOOST_TEST(ten.kind == starling::kGptKind);
  BOOST_TEST((ten.blocks == 6 && ten.heads == 6 && ten.width == 384 && ten.context == 256));
  const starling::ModelSpec wide =
      parse_config(data + "[model]\nkind = \"gpt\"\npreset = \"gpt2-small\"\ncontext = 128\n", "t").node.train.learner.model;
  BOOST_TEST((wide.blocks == 12 && wide.width == 768 && wide.context == 128));
  const starling::ModelSpec nano = parse_config(data + "[model]\nkind = \"gpt\"\n", "t").node.train.learner.model;
  const starling::ModelSpec named = parse_config(data + "[model]\npreset = \"gpt-nano\"\n", "t").node.train.learner.model;
  BOOST_TEST((named.blocks == nano.blocks && named.heads == nano.heads && named.width == nano.width && named.context == nano.context));
  const std::string unknown = error_of(data + "[model]\npreset = \"gpt-3\"\n");
  BOOST_TEST(contains(unknown, "test.toml:5: model.preset: expected one of"), unknown);
  const std::string images = error_of("[model]\nkind = \"mlp\"\npreset = \"gpt-10m\"\n");
  BOOST_TEST(contains(images, "test.toml:3: model.preset: expected only with model.kind = \"gpt\""), images);
}

// A GPT layer list's bad values name file:line:key.
BOOST_AUTO_TEST_CASE(bad_gpt_layer_lists_name_the_line_and_key) {
  const std::string text = "[data]\ndataset = \"text\"\npath = \"text\"\n[model]\ncontext = 8\n";
  const std::string embed = "[[model.layers]]\nkind = \"token_embedding\"\nsize = 16\n";
  const std::string head = "[[model.layers]]\nkind = \"tied_head\"\n";
  std::string e = error_of(text + embed + "[[model.layers]]\nkind = \"attention\"\nheads = 3\n" + head);
  BOOST_TEST((contains(e, "test.toml:9") && contains(e, "model.layers[1].heads") && contains(e, "divide")), e);
  e = error_of(text + "[[model.layers]]\nkind = \"token_embedding\"\nsize = 16\nvocab = 100\n" + head);
  BOOST_TEST((contains(e, "test.toml:6") && contains(e, "model.layers[0].vocab") && contains(e, "256")), e);
  e = error_of(text + embed + "[[model.layers]]\nkind = \"residual\"\n[[model.layers.body]]\nkind = \"tied_head\"\n");
  BOOST_TEST((contains(e, "test.toml:9") && contains(e, "model.layers[1].shortcut") && contains(e, "1x8x256")), e);
  e = error_of(text + embed + "[[model.layers]]\nkind = \"dense\"\nsize = 8\nper_token = true\n" + head);
  BOOST_TEST((contains(e, "test.toml:13") && contains(e, "model.layers[2].kind") && contains(e, "8 wide")), e);
  e = error_of(text + "[[model.layers]]\nkind = \"token_embedding\"\nsize = 16\n[[model.layers]]\nkind = \"layernorm\"\n");
  BOOST_TEST((contains(e, "model.layers[1]") && contains(e, "class")), e);
  e = error_of("[[model.layers]]\nkind = \"flatten\"\n[[model.layers]]\nkind = \"tied_head\"\n");
  BOOST_TEST((contains(e, "test.toml:3") && contains(e, "model.layers[1].kind") && contains(e, "token_embedding")), e);
  e = error_of("[[model.layers]]\nkind = \"attention\"\nheads = 1\n[[model.layers]]\nkind = \"dense\"\nsize = 10\n");
  BOOST_TEST((contains(e, "test.toml:1") && contains(e, "model.layers[0].kind") && contains(e, "token sequence")), e);
  e = error_of(text + embed + "[[model.layers]]\nkind = \"dense\"\nsize = 256\ninit_std = 0.1\n");
  BOOST_TEST((contains(e, "model.layers[1].init_std") && contains(e, "no such key")), e);
  e = error_of("[[model.layers]]\nkind = \"flatten\"\n[[model.layers]]\nkind = \"dense\"\nsize = 10\n", {"data.dataset=text"});
  BOOST_TEST((contains(e, "model.layers") && contains(e, "token_embedding")), e);
}
