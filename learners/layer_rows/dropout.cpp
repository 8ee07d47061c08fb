// Layer "dropout": in training, each value zeroed with probability `rate` and the rest scaled
// by 1/(1 − rate), each dropout layer's masks its own; the identity in evaluation.
#include "learners/layers/dropout.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerKey kKeys[] = {
    number_key("rate", LayerKey::kRequired, 0, 1, false, true, "the probability of zeroing a value, in [0, 1)"),
};

constexpr LayerRow row() {
  LayerRow r;
  r.name = "dropout";
  r.doc = "training only; its masks are keyed by the learner's seed, shard and step, so a resumed run draws the same ones";
  r.shape = [](LayerDesc& d, DescribeContext&) { return d.in; };
  r.make = [](const LayerDesc& d, LayerBuild& build, Layers& out) {
    out.push_back(std::make_unique<Dropout>(d.in, d.value("rate"), build.salt++));
  };
  r.json = [](const LayerDesc& d) { return json_key("rate", std::to_string(d.value("rate"))); };
  r.toml = [](const LayerDesc& d) { return toml_key("rate", number_text(d.value("rate"), false)); };
  return with_keys(r, kKeys);
}

}  // namespace

extern constexpr LayerRow dropout_row = row();

}  // namespace starling::layer_kinds
