#include "learners/layer_factory.h"

#include "learners/layers/conv2d.h"
#include "learners/layers/dense.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/group_norm.h"
#include "learners/layers/pooling.h"
#include "learners/layers/residual.h"

#include <stdexcept>

namespace starling {

std::unique_ptr<Layer> make_layer(const LayerDesc& d) {
  using Kind = LayerDesc::Kind;
  switch (d.kind) {
    case Kind::dense: return std::make_unique<Dense>(static_cast<int>(d.in.size()), d.size);
    case Kind::conv2d: return std::make_unique<Conv2D>(d.in, d.size, d.kernel, d.stride, d.padding, d.bias);
    case Kind::maxpool2d: return std::make_unique<MaxPool2D>(d.in, d.kernel, d.stride);
    case Kind::relu: return std::make_unique<ReLU>(d.in);
    case Kind::flatten: return std::make_unique<Flatten>(d.in);
    case Kind::groupnorm: return std::make_unique<GroupNorm>(d.in, d.groups);
    case Kind::global_avgpool: return std::make_unique<GlobalAvgPool>(d.in);
    case Kind::residual:
      return std::make_unique<Residual>(LayerChain(d.in, make_layers(d.body)), LayerChain(d.in, make_layers(d.shortcut)));
  }
  throw std::invalid_argument("model: unknown layer kind");
}

std::vector<std::unique_ptr<Layer>> make_layers(const std::vector<LayerDesc>& descs) {
  std::vector<std::unique_ptr<Layer>> layers;
  for (const LayerDesc& d : descs) layers.push_back(make_layer(d));
  return layers;
}

}  // namespace starling
