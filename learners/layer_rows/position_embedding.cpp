// Layer "position_embedding": adds a learned [T × C] to a token sequence {1, T, C}.
#include "learners/layers/embedding.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerRow row() {
  LayerRow r;
  r.name = "position_embedding";
  r.doc = "learned, added to each position";
  r.shape = [](LayerDesc& d, DescribeContext& context) {
    context.require_tokens(d, "position_embedding");
    return d.in;
  };
  r.make = [](const LayerDesc& d, LayerBuild&, Layers& out) {
    out.push_back(std::make_unique<PositionEmbedding>(d.in.w, d.in.c));
  };
  r.parameters = [](const LayerDesc& d) { return static_cast<double>(d.in.w) * d.in.c; };
  return r;
}

}  // namespace

extern constexpr LayerRow position_embedding_row = row();

}  // namespace starling::layer_kinds
