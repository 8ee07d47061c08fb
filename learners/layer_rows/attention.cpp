// Layer "attention": causal self-attention with `heads` heads over a token sequence {1, T, C},
// built as three layers: the fused QKV projection (weights N(0, init_std)), the attention
// core and the output projection (N(0, projection_std)).
#include "learners/layers/causal_attention.h"
#include "learners/layers/token_dense.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerKey kKeys[] = {
    integer_key("heads", LayerKey::kRequired, 1, 1 << 16, "the number of attention heads, a divisor of the width"),
    number_key("init_std", kGptInitStd, 0, 1, true, false),
    number_key("projection_std", kGptInitStd, 0, 1, true, false),
};

Shape shape(LayerDesc& d, DescribeContext& context) {
  context.require_tokens(d, "attention");
  const int heads = d.integer("heads");
  if (d.in.c % heads != 0)
    context.fail("heads", "attention: " + std::to_string(heads) + " heads do not divide the width " + std::to_string(d.in.c));
  return d.in;
}

void make(const LayerDesc& d, LayerBuild&, Layers& out) {
  const int context = d.in.w, width = d.in.c;
  out.push_back(std::make_unique<TokenDense>(context, width, 3 * width, d.single("init_std")));
  out.push_back(std::make_unique<CausalAttention>(context, width, d.integer("heads")));
  out.push_back(std::make_unique<TokenDense>(context, width, width, d.single("projection_std")));
}

template <std::string (*key)(std::string_view, const std::string&)>
std::string keys(const LayerDesc& d) {
  return key("heads", std::to_string(d.integer("heads"))) + key("init_std", number_text(d.single("init_std"), true)) +
         key("projection_std", number_text(d.single("projection_std"), true));
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "attention";
  r.doc = "causal, fused QKV and output projection inside";
  r.shape = &shape, r.make = &make;
  // The fused QKV and the output projection.
  r.parameters = [](const LayerDesc& d) { return 4.0 * d.in.c * d.in.c + 4.0 * d.in.c; };
  // The fused QKV and the probabilities P, one T × T per head.
  r.activations = [](const LayerDesc& d) {
    return 3.0 * d.in.size() + static_cast<double>(d.integer("heads")) * d.in.w * d.in.w;
  };
  r.json = &keys<json_key>, r.toml = &keys<toml_key>;
  r.label = [](const LayerDesc& d) { return "(" + std::to_string(d.integer("heads")) + " heads)"; };
  return with_keys(r, kKeys);
}

}  // namespace

extern constexpr LayerRow attention_row = row();

}  // namespace starling::layer_kinds
