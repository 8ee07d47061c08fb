// Layer "groupnorm": GroupNorm over `groups` groups of channels, which they divide, with a
// scale and shift per channel.
#include "learners/layers/group_norm.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerKey kKeys[] = {
    integer_key("groups", LayerKey::kRequired, 1, 1 << 20, "the number of channel groups"),
};

Shape shape(LayerDesc& d, DescribeContext& context) {
  const int groups = d.integer("groups");
  if (d.in.c % groups != 0)
    context.fail("groups", "groupnorm: " + std::to_string(groups) + " groups do not divide " + std::to_string(d.in.c) + " channels");
  return d.in;
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "groupnorm";
  r.doc = "`groups` divide the channels";
  r.shape = &shape;
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) {
    out.push_back(std::make_unique<GroupNorm>(d.in, d.integer("groups")));
  };
  r.parameters = [](const LayerDesc& d) { return 2.0 * d.in.c; };
  r.json = [](const LayerDesc& d) { return json_key("groups", std::to_string(d.integer("groups"))); };
  r.toml = [](const LayerDesc& d) { return toml_key("groups", std::to_string(d.integer("groups"))); };
  r.label = [](const LayerDesc& d) { return "(" + std::to_string(d.integer("groups")) + ")"; };
  return with_keys(r, kKeys);
}

}  // namespace

extern constexpr LayerRow groupnorm_row = row();

}  // namespace starling::layer_kinds
