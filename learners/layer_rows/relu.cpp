// Layer "relu": max(x, 0); the factory moves it into the layer before where it can.
#include "learners/layers/elementwise.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerRow row() {
  LayerRow r;
  r.name = "relu";
  r.shape = [](LayerDesc& d, DescribeContext&) { return d.in; };
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) { out.push_back(std::make_unique<ReLU>(d.in)); };
  return r;
}

}  // namespace

extern constexpr LayerRow relu_row = row();

}  // namespace starling::layer_kinds
