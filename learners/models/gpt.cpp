// nanoGPT as a layer description (learners/models/gpt.h).
#include "learners/models/gpt.h"

#include "learners/layers/embedding.h"  // kGptInitStd
#include "learners/models/layer_factory.h"
#include "learners/models/model_description.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace starling {
namespace {

LayerDesc per_token_dense(int size, float init_std) {
  return layer_of("dense").set("size", size).set("per_token", 1).set("init_std", init_std);
}

// x + body(x), the shortcut the identity.
LayerDesc residual(std::vector<LayerDesc> body) {
  LayerDesc d = layer_of("residual");
  d.body = std::move(body);
  return d;
}

// x + proj(attn(qkv(ln1(x)))): the attention layer holds the fused QKV and the projection.
LayerDesc attention_block(const GptSpec& s, float projection_std) {
  return residual({layer_of("layernorm"), layer_of("attention").set("heads", s.heads).set("projection_std", projection_std)});
}

// x + fc2(gelu(fc1(ln2(x)))), 4× wide; or x + swiglu(ln2(x)), its W2 the output projection.
LayerDesc mlp_block(const GptSpec& s, float projection_std) {
  if (s.mlp == "swiglu")
    return residual({layer_of("layernorm"), layer_of("swiglu")
                                                .set("size", gpt_swiglu_hidden(s.width))
                                                .set("projection_std", projection_std)});
  return residual({layer_of("layernorm"), per_token_dense(4 * s.width, kGptInitStd), layer_of("gelu"),
                   per_token_dense(s.width, projection_std)});
}

}  // namespace

GptSpec gpt_spec(const ModelSpec& spec) {
  return {spec.blocks, spec.heads, spec.width, spec.context, spec.classes, spec.mlp};
}

std::vector<LayerDesc> gpt_description(const GptSpec& s) {
  if (s.layers < 1 || s.heads < 1 || s.width < 1 || s.context < 1 || s.vocab < 1)
    throw std::invalid_argument("gpt: layers, heads, width, context and vocabulary must be positive");
  if (std::find(std::begin(kGptMlps), std::end(kGptMlps), s.mlp) == std::end(kGptMlps))
    throw std::invalid_argument("gpt: unknown MLP '" + s.mlp + "'");
  // nanoGPT scales the residual stream's output projections by its depth (GPT-2's 1/√N).
  const float projection_std = kGptInitStd / std::sqrt(2.f * static_cast<float>(s.layers));
  std::vector<LayerDesc> layers{layer_of("token_embedding").set("size", s.width).set("vocab", s.vocab),
                                layer_of("position_embedding")};
  for (int i = 0; i < s.layers; ++i) {
    layers.push_back(attention_block(s, projection_std));
    layers.push_back(mlp_block(s, projection_std));
  }
  layers.push_back(layer_of("layernorm"));
  layers.push_back(layer_of("tied_head"));
  return layers;
}

std::vector<std::unique_ptr<Layer>> make_gpt(const GptSpec& s) {
  return make_layers(with_shapes(gpt_description(s), Shape{1, s.context, 1}, s.vocab));
}

}  // namespace starling
