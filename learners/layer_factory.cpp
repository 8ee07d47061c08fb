#include "learners/layer_factory.h"

#include "learners/layers/causal_attention.h"
#include "learners/layers/conv2d.h"
#include "learners/layers/dense.h"
#include "learners/layers/dropout.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/gelu.h"
#include "learners/layers/group_norm.h"
#include "learners/layers/layer_norm.h"
#include "learners/layers/pooling.h"
#include "learners/layers/residual.h"
#include "learners/layers/rms_norm.h"
#include "learners/layers/tied_head.h"
#include "learners/layers/token_dense.h"

#include <stdexcept>

namespace starling {

namespace {

bool passes_relu_through(const Layer& layer) {
  // Max-pooling and flattening keep "this value came out of a ReLU" true.
  return dynamic_cast<const MaxPool2D*>(&layer) || dynamic_cast<const Flatten*>(&layer);
}

// A ReLU after a layer that can apply it moves into that layer. Its backward is then either
// the layer's own (absorbs_relu: it masks its output gradient itself) or a mask on the input
// gradient of the next GEMM layer (the ReLU output is that layer's input, possibly through
// pooling/flatten, which keep zeros at zero). Otherwise the ReLU stays a layer of its own.
std::vector<std::unique_ptr<Layer>> fuse_relus(std::vector<std::unique_ptr<Layer>> layers) {
  for (std::size_t i = 1; i < layers.size(); ++i) {
    if (!dynamic_cast<ReLU*>(layers[i].get()) || !layers[i - 1]->can_apply_relu()) continue;
    if (!layers[i - 1]->absorbs_relu()) {
      std::size_t consumer = i + 1;
      while (consumer < layers.size() && passes_relu_through(*layers[consumer])) ++consumer;
      if (consumer == layers.size() || !layers[consumer]->can_mask_relu_input()) continue;
      layers[consumer]->set_relu_input(true);
    }
    layers[i - 1]->set_relu_output(true);
    layers.erase(layers.begin() + static_cast<long>(i));
  }
  return layers;
}

// A max pool whose windows tile its input, right after a convolution, moves into it
// (Conv2D::set_max_pool). Run after fuse_relus, which looks through the pool for the ReLU's
// consumer.
std::vector<std::unique_ptr<Layer>> fuse_pools(std::vector<std::unique_ptr<Layer>> layers) {
  for (std::size_t i = 1; i < layers.size(); ++i) {
    auto* conv = dynamic_cast<Conv2D*>(layers[i - 1].get());
    const auto* pool = dynamic_cast<const MaxPool2D*>(layers[i].get());
    if (!conv || !pool || !pool->tiles()) continue;
    conv->set_max_pool(pool->size());
    layers.erase(layers.begin() + static_cast<long>(i));
  }
  return layers;
}

using Layers = std::vector<std::unique_ptr<Layer>>;

// What building a list carries from layer to layer: `salt` numbers the dropout layers, so
// that each draws masks of its own; `embedding` is the first token embedding built, the one
// a tied head shares its weights with.
struct Build {
  uint64_t salt = 0;
  TokenEmbedding* embedding = nullptr;
};

void make(const LayerDesc& d, Build& build, Layers& out);

Layers make_all(const std::vector<LayerDesc>& descs, Build& build) {
  Layers layers;
  for (const LayerDesc& d : descs) make(d, build, layers);
  return fuse_pools(fuse_relus(std::move(layers)));
}

// A dense layer's rows are the sample's, or each token's (TokenDense, nanoGPT's init).
std::unique_ptr<Layer> make_dense(const LayerDesc& d) {
  if (d.per_token) return std::make_unique<TokenDense>(d.in.w, d.in.c, d.size, d.init_std);
  return std::make_unique<Dense>(static_cast<int>(d.in.size()), d.size);
}

// Attention with its projections, as three layers: the fused QKV, the attention core (which
// has no parameters) and the output projection.
void make_attention(const LayerDesc& d, Layers& out) {
  const int context = d.in.w, width = d.in.c;
  out.push_back(std::make_unique<TokenDense>(context, width, 3 * width, d.init_std));
  out.push_back(std::make_unique<CausalAttention>(context, width, d.heads));
  out.push_back(std::make_unique<TokenDense>(context, width, width, d.projection_std));
}

std::unique_ptr<Layer> make_embedding(const LayerDesc& d, Build& build) {
  auto embedding = std::make_unique<TokenEmbedding>(d.in.w, d.vocab, d.size);
  if (!build.embedding) build.embedding = embedding.get();
  return embedding;
}

std::unique_ptr<Layer> make_tied_head(Build& build) {
  if (!build.embedding) throw std::invalid_argument("model: a tied_head without a token_embedding before it");
  return std::make_unique<TiedHead>(*build.embedding);
}

std::unique_ptr<Layer> make_one(const LayerDesc& d, Build& build) {
  using Kind = LayerDesc::Kind;
  switch (d.kind) {
    case Kind::dense: return make_dense(d);
    case Kind::conv2d: return std::make_unique<Conv2D>(d.in, d.size, d.kernel, d.stride, d.padding, d.bias);
    case Kind::maxpool2d: return std::make_unique<MaxPool2D>(d.in, d.kernel, d.stride);
    case Kind::avgpool2d: return std::make_unique<AvgPool2D>(d.in, d.kernel, d.stride);
    case Kind::relu: return std::make_unique<ReLU>(d.in);
    case Kind::flatten: return std::make_unique<Flatten>(d.in);
    case Kind::groupnorm: return std::make_unique<GroupNorm>(d.in, d.groups);
    case Kind::global_avgpool: return std::make_unique<GlobalAvgPool>(d.in);
    case Kind::dropout: return std::make_unique<Dropout>(d.in, d.rate, build.salt++);
    case Kind::residual: {
      LayerChain body(d.in, make_all(d.body, build));
      return std::make_unique<Residual>(std::move(body), LayerChain(d.in, make_all(d.shortcut, build)));
    }
    case Kind::token_embedding: return make_embedding(d, build);
    case Kind::position_embedding: return std::make_unique<PositionEmbedding>(d.in.w, d.in.c);
    case Kind::layernorm: return std::make_unique<LayerNorm>(d.in);
    case Kind::rmsnorm: return std::make_unique<RmsNorm>(d.in);
    case Kind::gelu: return std::make_unique<Gelu>(d.in);
    case Kind::tied_head: return make_tied_head(build);
    case Kind::attention: break;  // three layers: make_attention
  }
  throw std::invalid_argument("model: unknown layer kind");
}

void make(const LayerDesc& d, Build& build, Layers& out) {
  if (d.kind == LayerDesc::Kind::attention) return make_attention(d, out);
  out.push_back(make_one(d, build));
}

}  // namespace

std::vector<std::unique_ptr<Layer>> make_layers(const std::vector<LayerDesc>& descs) {
  Build build;
  return make_all(descs, build);
}

}  // namespace starling
