// Layer "layernorm": LayerNorm over each token's (each pixel's) channels, with a scale and
// shift per channel.
#include "learners/layers/layer_norm.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerRow row() {
  LayerRow r;
  r.name = "layernorm";
  r.doc = "over each token's channels";
  r.shape = [](LayerDesc& d, DescribeContext&) { return d.in; };
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) { out.push_back(std::make_unique<LayerNorm>(d.in)); };
  r.parameters = [](const LayerDesc& d) { return 2.0 * d.in.c; };
  return r;
}

}  // namespace

extern constexpr LayerRow layernorm_row = row();

}  // namespace starling::layer_kinds
