// Layer "dense": `size` units on the flattened sample, or with `per_token` on each token of a
// sequence {1, T, C} (TokenDense, weights N(0, init_std)).
#include "learners/layers/token_dense.h"
#include "learners/models/layer_row.h"

#include <sstream>

namespace starling::layer_kinds {
namespace {

constexpr LayerKey kKeys[] = {
    integer_key("size", LayerKey::kRequired, 1, 1 << 20, "the layer's output units"),
    flag_key("per_token", false),
    only_with(number_key("init_std", kGptInitStd, 0, 1, true, false), "per_token"),
};

Shape shape(LayerDesc& d, DescribeContext& context) {
  if (!d.flag("per_token")) return {1, 1, d.integer("size")};
  context.require_tokens(d, "dense per_token");
  return {1, d.in.w, d.integer("size")};
}

void make(const LayerDesc& d, LayerBuild&, Layers& out) {
  if (d.flag("per_token")) out.push_back(std::make_unique<TokenDense>(d.in.w, d.in.c, d.integer("size"), d.single("init_std")));
  else out.push_back(std::make_unique<Dense>(static_cast<int>(d.in.size()), d.integer("size")));
}

double parameters(const LayerDesc& d) {
  const double size = d.integer("size");
  return static_cast<double>(d.flag("per_token") ? d.in.c : d.in.size()) * size + size;
}

std::string what(const LayerDesc& d) {
  std::ostringstream s;
  if (d.flag("per_token")) s << "dense of " << d.integer("size") << " units on each of " << d.in.w << " tokens of " << d.in.c;
  else s << "dense of " << d.integer("size") << " units on " << d.in.size() << " inputs";
  return s.str();
}

std::string json(const LayerDesc& d) {
  std::string out = json_key("size", std::to_string(d.integer("size")));
  if (d.flag("per_token")) out += json_key("per_token", "true") + json_key("init_std", number_text(d.single("init_std"), true));
  return out;
}

std::string toml(const LayerDesc& d) {
  std::string out = toml_key("size", std::to_string(d.integer("size")));
  if (d.flag("per_token")) out += toml_key("per_token", "true") + toml_key("init_std", number_text(d.single("init_std"), true));
  return out;
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "dense";
  r.doc = "with `per_token`, on each token of a sequence";
  r.shape = &shape, r.make = &make, r.parameters = &parameters, r.what = &what, r.json = &json, r.toml = &toml;
  r.label = [](const LayerDesc& d) { return std::string(d.flag("per_token") ? " per token" : ""); };
  return with_keys(r, kKeys);
}

}  // namespace

extern constexpr LayerRow dense_row = row();

}  // namespace starling::layer_kinds
