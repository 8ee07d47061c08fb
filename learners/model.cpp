#include "learners/model.h"

#include "learners/layers/conv2d.h"
#include "learners/layers/dense.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/pooling.h"
#include "learners/model_description.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace starling {
namespace {

std::unique_ptr<Layer> make_layer(const LayerDesc& d) {
  switch (d.kind) {
    case LayerDesc::Kind::dense: return std::make_unique<Dense>(static_cast<int>(d.in.size()), d.size);
    case LayerDesc::Kind::conv2d: return std::make_unique<Conv2D>(d.in, d.size, d.kernel, d.stride, d.padding);
    case LayerDesc::Kind::maxpool2d: return std::make_unique<MaxPool2D>(d.in, d.kernel, d.stride);
    case LayerDesc::Kind::relu: return std::make_unique<ReLU>(d.in);
    case LayerDesc::Kind::flatten: return std::make_unique<Flatten>(d.in);
  }
  throw std::invalid_argument("model: unknown layer kind");
}

bool passes_relu_through(const Layer& layer) {
  // Max-pooling and flattening keep "this value came out of a ReLU" true.
  return dynamic_cast<const MaxPool2D*>(&layer) || dynamic_cast<const Flatten*>(&layer);
}

}  // namespace

Model::Model(const ModelSpec& spec) : spec_(spec) {
  for (const LayerDesc& d : describe_model(spec)) layers_.push_back(make_layer(d));
  fuse_relus();
  std::size_t total = 0;
  for (auto& layer : layers_) total += (layer->param_count() + 15) / 16 * 16;  // keep views 64-byte aligned
  params_.resize(total);
  grads_.resize(total);
  std::size_t offset = 0;
  for (auto& layer : layers_) {
    layer->bind(params_.data() + offset, grads_.data() + offset);
    offset += (layer->param_count() + 15) / 16 * 16;
  }
  acts_.resize(layers_.size());
}

// A ReLU after a GEMM layer moves into that layer's epilogue, and its backward becomes a
// mask on the input gradient of the next GEMM layer (the ReLU output is that layer's input,
// possibly through pooling/flatten, which keep zeros at zero). Without such a consumer the
// ReLU stays a layer of its own.
void Model::fuse_relus() {
  for (std::size_t i = 1; i + 1 < layers_.size(); ++i) {
    if (!dynamic_cast<ReLU*>(layers_[i].get()) || !layers_[i - 1]->can_fuse_relu()) continue;
    std::size_t consumer = i + 1;
    while (consumer < layers_.size() && passes_relu_through(*layers_[consumer])) ++consumer;
    if (consumer == layers_.size() || !layers_[consumer]->can_fuse_relu()) continue;
    layers_[i - 1]->set_relu_output(true);
    layers_[consumer]->set_relu_input(true);
    layers_.erase(layers_.begin() + static_cast<long>(i));
  }
}

void Model::init(uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto& layer : layers_) layer->init(rng);
}

void Model::reserve(int batch) {
  if (batch <= reserved_batch_) return;
  long widest = spec_.input.size();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const long out = layers_[i]->output_shape().size();
    widest = std::max(widest, out);
    acts_[i].resize(static_cast<std::size_t>(batch) * out);
    layers_[i]->reserve(batch);
  }
  grad_a_.resize(static_cast<std::size_t>(batch) * widest);
  grad_b_.resize(static_cast<std::size_t>(batch) * widest);
  reserved_batch_ = batch;
}

const float* Model::forward(kernels::Backend backend, int batch, const float* x) {
  reserve(batch);
  const float* in = x;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->forward(backend, batch, in, acts_[i].data());
    in = acts_[i].data();
  }
  return in;
}

void Model::backward(kernels::Backend backend, int batch, const float* x, const float* dlogits) {
  const float* dy = dlogits;
  float* dx = grad_a_.data();
  for (std::size_t i = layers_.size(); i-- > 0;) {
    const float* in = i == 0 ? x : acts_[i - 1].data();
    layers_[i]->backward(backend, batch, in, acts_[i].data(), dy, i == 0 ? nullptr : dx);
    dy = dx;
    dx = dx == grad_a_.data() ? grad_b_.data() : grad_a_.data();
  }
}

std::size_t Model::trainable_count() const {
  std::size_t total = 0;
  for (const auto& layer : layers_) total += layer->param_count();
  return total;
}

std::string Model::describe() const {
  std::string out;
  for (const auto& layer : layers_)
    out += "  " + layer->name() + "  params=" + std::to_string(layer->param_count()) + "\n";
  out += "  total params=" + std::to_string(param_count());
  return out;
}

std::string Model::signature() const {
  std::string sig = std::to_string(spec_.input.h) + "x" + std::to_string(spec_.input.w) + "x" +
                    std::to_string(spec_.input.c);
  for (const auto& layer : layers_) sig += "|" + layer->name();
  return sig + "|" + std::to_string(param_count());
}

std::vector<uint64_t> Model::tensor_sizes() const {
  std::vector<uint64_t> sizes;
  for (const auto& layer : layers_)
    if (layer->param_count() > 0) sizes.push_back((layer->param_count() + 15) / 16 * 16);  // with its padding
  return sizes;
}

std::string checksum_hex(const float* data, std::size_t count) {
  uint64_t hash = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < count * sizeof(float); ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace starling
