// Layer "rmsnorm": RMSNorm over each token's (each pixel's) channels, with a scale per channel.
#include "learners/layers/rms_norm.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerRow row() {
  LayerRow r;
  r.name = "rmsnorm";
  r.doc = "over each token's channels";
  r.shape = [](LayerDesc& d, DescribeContext&) { return d.in; };
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) { out.push_back(std::make_unique<RmsNorm>(d.in)); };
  r.parameters = [](const LayerDesc& d) { return static_cast<double>(d.in.c); };
  return r;
}

}  // namespace

extern constexpr LayerRow rmsnorm_row = row();

}  // namespace starling::layer_kinds
