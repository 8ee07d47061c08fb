// Building a description's layers: each row makes its own (learners/models/layer_row.h); the
// fusions across layers are here.
#include "learners/models/layer_factory.h"

#include "learners/layers/conv2d.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/pooling.h"

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

}  // namespace

Layers LayerBuild::chain(const std::vector<LayerDesc>& descs) {
  Layers layers;
  for (const LayerDesc& d : descs) d.row->make(d, *this, layers);
  return fuse_pools(fuse_relus(std::move(layers)));
}

std::vector<std::unique_ptr<Layer>> make_layers(const std::vector<LayerDesc>& descs) {
  LayerBuild build;
  return build.chain(descs);
}

}  // namespace starling
