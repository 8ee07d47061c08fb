// Layer "residual": y = body(x) + shortcut(x), the shortcut the identity when it has no
// layers; both lists are described from the block's input and must end in the same shape.
#include "learners/layers/residual.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

std::string shape_text(Shape s) { return std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c); }

Shape shape(LayerDesc& d, DescribeContext& context) {
  if (d.body.empty()) context.fail("body", "residual: the body is empty");
  d.body = context.nested(d.body, d.in, "body");
  d.shortcut = context.nested(d.shortcut, d.in, "shortcut");
  const Shape a = d.body.back().out, b = d.shortcut.empty() ? d.in : d.shortcut.back().out;
  if (!(a == b))
    context.fail("shortcut", "residual: the body gives " + shape_text(a) + " but the shortcut " + shape_text(b) +
                                 (d.shortcut.empty() ? " (add a projection shortcut)" : ""));
  return a;
}

void make(const LayerDesc& d, LayerBuild& build, Layers& out) {
  LayerChain body(d.in, build.chain(d.body));  // the body first: the arena follows the description
  LayerChain shortcut(d.in, build.chain(d.shortcut));
  out.push_back(std::make_unique<Residual>(std::move(body), std::move(shortcut)));
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "residual";
  r.doc = "y = body(x) + shortcut(x), both lists of layer tables; no shortcut: the identity";
  r.nested = true;
  r.shape = &shape, r.make = &make;
  return r;
}

}  // namespace

extern constexpr LayerRow residual_row = row();

}  // namespace starling::layer_kinds
