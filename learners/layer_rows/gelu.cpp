// Layer "gelu": the exact GELU, x·Φ(x).
#include "learners/layers/gelu.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerRow row() {
  LayerRow r;
  r.name = "gelu";
  r.doc = "exact";
  r.shape = [](LayerDesc& d, DescribeContext&) { return d.in; };
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) { out.push_back(std::make_unique<Gelu>(d.in)); };
  return r;
}

}  // namespace

extern constexpr LayerRow gelu_row = row();

}  // namespace starling::layer_kinds
