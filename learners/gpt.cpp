// nanoGPT's layer list (learners/gpt.h).
#include "learners/gpt.h"

#include "learners/layer_chain.h"
#include "learners/layers/causal_attention.h"
#include "learners/layers/embedding.h"
#include "learners/layers/gelu.h"
#include "learners/layers/layer_norm.h"
#include "learners/layers/residual.h"
#include "learners/layers/tied_head.h"
#include "learners/layers/token_dense.h"

#include <cmath>
#include <stdexcept>

namespace starling {
namespace {

using Layers = std::vector<std::unique_ptr<Layer>>;

// x + f(x) for f = the chain of `body` on sequences of `width`.
std::unique_ptr<Layer> residual(const GptSpec& s, Layers body) {
  const Shape seq{1, s.context, s.width};
  return std::make_unique<Residual>(LayerChain(seq, std::move(body)), LayerChain(seq, {}));
}

std::unique_ptr<Layer> attention_block(const GptSpec& s, float projection_std) {
  Layers body;
  body.push_back(std::make_unique<LayerNorm>(Shape{1, s.context, s.width}));
  body.push_back(std::make_unique<TokenDense>(s.context, s.width, 3 * s.width));
  body.push_back(std::make_unique<CausalAttention>(s.context, s.width, s.heads));
  body.push_back(std::make_unique<TokenDense>(s.context, s.width, s.width, projection_std));
  return residual(s, std::move(body));
}

std::unique_ptr<Layer> mlp_block(const GptSpec& s, float projection_std) {
  Layers body;
  body.push_back(std::make_unique<LayerNorm>(Shape{1, s.context, s.width}));
  body.push_back(std::make_unique<TokenDense>(s.context, s.width, 4 * s.width));
  body.push_back(std::make_unique<Gelu>(Shape{1, s.context, 4 * s.width}));
  body.push_back(std::make_unique<TokenDense>(s.context, 4 * s.width, s.width, projection_std));
  return residual(s, std::move(body));
}

}  // namespace

std::vector<std::unique_ptr<Layer>> make_gpt(const GptSpec& s) {
  if (s.layers < 1 || s.heads < 1 || s.width < 1 || s.context < 1 || s.vocab < 1)
    throw std::invalid_argument("gpt: layers, heads, width, context and vocabulary must be positive");
  if (s.width % s.heads != 0)
    throw std::invalid_argument("gpt: " + std::to_string(s.heads) + " heads do not divide the width " + std::to_string(s.width));
  const float projection_std = kGptInitStd / std::sqrt(2.f * static_cast<float>(s.layers));
  Layers layers;
  auto embedding = std::make_unique<TokenEmbedding>(s.context, s.vocab, s.width);
  TokenEmbedding& tied = *embedding;
  layers.push_back(std::move(embedding));
  layers.push_back(std::make_unique<PositionEmbedding>(s.context, s.width));
  for (int i = 0; i < s.layers; ++i) {
    layers.push_back(attention_block(s, projection_std));
    layers.push_back(mlp_block(s, projection_std));
  }
  layers.push_back(std::make_unique<LayerNorm>(Shape{1, s.context, s.width}));
  layers.push_back(std::make_unique<TiedHead>(tied));
  return layers;
}

}  // namespace starling
