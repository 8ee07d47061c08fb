// Layer "tied_head": each token's logits over the vocabulary, x·Wᵀ with W the list's first
// token embedding's [vocab × width] (one slice of the arena, both layers' gradients added).
#include "learners/layers/tied_head.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

// The vocabulary is derived, the first embedding's: an option of the description, not a key.
Shape shape(LayerDesc& d, DescribeContext& context) {
  if (context.embedding_vocab == 0) context.fail("kind", "tied_head: no token_embedding before it to tie to");
  if (d.in.c != context.embedding_width)
    context.fail("kind", "tied_head: its tokens are " + std::to_string(d.in.c) + " wide, the token_embedding it ties to " +
                             std::to_string(context.embedding_width));
  d.set("vocab", context.embedding_vocab);
  context.require_tokens(d, "tied_head");
  return {1, d.in.w, context.embedding_vocab};
}

void make(const LayerDesc&, LayerBuild& build, Layers& out) {
  if (!build.embedding) throw std::invalid_argument("model: a tied_head without a token_embedding before it");
  out.push_back(std::make_unique<TiedHead>(*build.embedding));
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "tied_head";
  r.doc = "the logits, with the first token embedding's weights";
  r.shape = &shape, r.make = &make;
  r.json = [](const LayerDesc& d) { return json_key("vocab", std::to_string(d.integer("vocab"))); };
  return r;
}

}  // namespace

extern constexpr LayerRow tied_head_row = row();

}  // namespace starling::layer_kinds
