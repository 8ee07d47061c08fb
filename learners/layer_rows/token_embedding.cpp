// Layer "token_embedding": T token ids {1, T, 1} as their rows {1, T, size} of a
// [vocab × size] table; `vocab` may only repeat the data's vocabulary. The first one of a
// list is the one a tied head shares.
#include "learners/layers/embedding.h"
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {
namespace {

constexpr LayerKey kKeys[] = {
    integer_key("size", LayerKey::kRequired, 1, 1 << 20, "the embedding's width"),
    integer_key("vocab", 0, 1, 1 << 24),
};

Shape shape(LayerDesc& d, DescribeContext& context) {
  if (!d.has("vocab")) d.set("vocab", context.data_vocab);
  const int vocab = d.integer("vocab");
  if (vocab != context.data_vocab)
    context.fail("vocab", "token_embedding: a vocabulary of " + std::to_string(vocab) + " tokens, but the data has " +
                              std::to_string(context.data_vocab));
  if (d.in.h != 1 || d.in.c != 1)
    context.fail("kind", "token_embedding: its input " + std::to_string(d.in.h) + "x" + std::to_string(d.in.w) + "x" +
                             std::to_string(d.in.c) + " is not a sequence of token ids (1xTx1)");
  if (context.embedding_vocab == 0) context.embedding_vocab = vocab, context.embedding_width = d.integer("size");
  return {1, d.in.w, d.integer("size")};
}

void make(const LayerDesc& d, LayerBuild& build, Layers& out) {
  auto embedding = std::make_unique<TokenEmbedding>(d.in.w, d.integer("vocab"), d.integer("size"));
  if (!build.embedding) build.embedding = embedding.get();
  out.push_back(std::move(embedding));
}

template <std::string (*key)(std::string_view, const std::string&)>
std::string keys(const LayerDesc& d) {
  return key("size", std::to_string(d.integer("size"))) + key("vocab", std::to_string(d.integer("vocab")));
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "token_embedding";
  r.doc = "first in a language model; `vocab`, if given, repeats the data's 256";
  r.shape = &shape, r.make = &make;
  r.parameters = [](const LayerDesc& d) { return static_cast<double>(d.integer("vocab")) * d.integer("size"); };
  r.json = &keys<json_key>, r.toml = &keys<toml_key>;
  return with_keys(r, kKeys);
}

}  // namespace

extern constexpr LayerRow token_embedding_row = row();

}  // namespace starling::layer_kinds
