// Layer "global_avgpool": each channel's mean over the whole image, {1, 1, c}.
#include "learners/layers/pooling.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerRow row() {
  LayerRow r;
  r.name = "global_avgpool";
  r.shape = [](LayerDesc& d, DescribeContext&) { return Shape{1, 1, d.in.c}; };
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) { out.push_back(std::make_unique<GlobalAvgPool>(d.in)); };
  return r;
}

}  // namespace

extern constexpr LayerRow global_avgpool_row = row();

}  // namespace starling::layer_kinds
