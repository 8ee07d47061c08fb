#include "learners/layer_factory.h"

#include "learners/layers/conv2d.h"
#include "learners/layers/dense.h"
#include "learners/layers/dropout.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/group_norm.h"
#include "learners/layers/pooling.h"
#include "learners/layers/residual.h"

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

// `salt` numbers the dropout layers, so that each draws masks of its own.
std::unique_ptr<Layer> make(const LayerDesc& d, uint64_t& salt);

std::vector<std::unique_ptr<Layer>> make_all(const std::vector<LayerDesc>& descs, uint64_t& salt) {
  std::vector<std::unique_ptr<Layer>> layers;
  for (const LayerDesc& d : descs) layers.push_back(make(d, salt));
  return fuse_pools(fuse_relus(std::move(layers)));
}

std::unique_ptr<Layer> make(const LayerDesc& d, uint64_t& salt) {
  using Kind = LayerDesc::Kind;
  switch (d.kind) {
    case Kind::dense: return std::make_unique<Dense>(static_cast<int>(d.in.size()), d.size);
    case Kind::conv2d: return std::make_unique<Conv2D>(d.in, d.size, d.kernel, d.stride, d.padding, d.bias);
    case Kind::maxpool2d: return std::make_unique<MaxPool2D>(d.in, d.kernel, d.stride);
    case Kind::avgpool2d: return std::make_unique<AvgPool2D>(d.in, d.kernel, d.stride);
    case Kind::relu: return std::make_unique<ReLU>(d.in);
    case Kind::flatten: return std::make_unique<Flatten>(d.in);
    case Kind::groupnorm: return std::make_unique<GroupNorm>(d.in, d.groups);
    case Kind::global_avgpool: return std::make_unique<GlobalAvgPool>(d.in);
    case Kind::dropout: return std::make_unique<Dropout>(d.in, d.rate, salt++);
    case Kind::residual: {
      LayerChain body(d.in, make_all(d.body, salt));
      return std::make_unique<Residual>(std::move(body), LayerChain(d.in, make_all(d.shortcut, salt)));
    }
  }
  throw std::invalid_argument("model: unknown layer kind");
}

}  // namespace

std::vector<std::unique_ptr<Layer>> make_layers(const std::vector<LayerDesc>& descs) {
  uint64_t salt = 0;
  return make_all(descs, salt);
}

}  // namespace starling
