// Layer "flatten": the sample as one vector {1, 1, h·w·c}, its floats unchanged.
#include "learners/layers/elementwise.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerRow row() {
  LayerRow r;
  r.name = "flatten";
  r.shape = [](LayerDesc& d, DescribeContext&) { return Shape{1, 1, static_cast<int>(d.in.size())}; };
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) { out.push_back(std::make_unique<Flatten>(d.in)); };
  return r;
}

}  // namespace

extern constexpr LayerRow flatten_row = row();

}  // namespace starling::layer_kinds
