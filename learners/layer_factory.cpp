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

// `salt` numbers the dropout layers, so that each draws masks of its own.
std::unique_ptr<Layer> make(const LayerDesc& d, uint64_t& salt);

std::vector<std::unique_ptr<Layer>> make_all(const std::vector<LayerDesc>& descs, uint64_t& salt) {
  std::vector<std::unique_ptr<Layer>> layers;
  for (const LayerDesc& d : descs) layers.push_back(make(d, salt));
  return layers;
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
