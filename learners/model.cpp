#include "learners/model.h"

#include "learners/layer_factory.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/pooling.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace starling {
namespace {

bool passes_relu_through(const Layer& layer) {
  // Max-pooling and flattening keep "this value came out of a ReLU" true.
  return dynamic_cast<const MaxPool2D*>(&layer) || dynamic_cast<const Flatten*>(&layer);
}

// A ReLU after a GEMM layer moves into that layer's epilogue, and its backward becomes a
// mask on the input gradient of the next GEMM layer (the ReLU output is that layer's input,
// possibly through pooling/flatten, which keep zeros at zero). Without such a consumer the
// ReLU stays a layer of its own.
std::vector<std::unique_ptr<Layer>> fuse_relus(std::vector<std::unique_ptr<Layer>> layers) {
  for (std::size_t i = 1; i + 1 < layers.size(); ++i) {
    if (!dynamic_cast<ReLU*>(layers[i].get()) || !layers[i - 1]->can_fuse_relu()) continue;
    std::size_t consumer = i + 1;
    while (consumer < layers.size() && passes_relu_through(*layers[consumer])) ++consumer;
    if (consumer == layers.size() || !layers[consumer]->can_fuse_relu()) continue;
    layers[i - 1]->set_relu_output(true);
    layers[consumer]->set_relu_input(true);
    layers.erase(layers.begin() + static_cast<long>(i));
  }
  return layers;
}

}  // namespace

Model::Model(const ModelSpec& spec) : spec_(spec), chain_(spec.input, fuse_relus(make_layers(describe_model(spec)))) {
  params_.resize(chain_.param_count());
  grads_.resize(chain_.param_count());
  chain_.bind(params_.data(), grads_.data());
}

void Model::init(uint64_t seed) {
  std::mt19937_64 rng(seed);
  chain_.init(rng);
}

const float* Model::forward(kernels::Backend backend, int batch, const float* x) {
  return chain_.forward(backend, batch, x);
}

void Model::backward(kernels::Backend backend, int batch, const float* x, const float* dlogits) {
  chain_.backward(backend, batch, x, dlogits, nullptr);
}

std::size_t Model::trainable_count() const {
  std::size_t total = 0;
  for (const auto& layer : chain_.layers()) total += layer->param_count();
  return total;
}

std::string Model::describe() const {
  std::string out;
  for (const auto& layer : chain_.layers())
    out += "  " + layer->name() + "  params=" + std::to_string(layer->param_count()) + "\n";
  out += "  total params=" + std::to_string(param_count());
  return out;
}

std::string Model::signature() const {
  std::string sig = std::to_string(spec_.input.h) + "x" + std::to_string(spec_.input.w) + "x" +
                    std::to_string(spec_.input.c);
  for (const auto& layer : chain_.layers()) sig += "|" + layer->name();
  return sig + "|" + std::to_string(param_count());
}

std::vector<uint64_t> Model::tensor_sizes() const {
  std::vector<uint64_t> sizes;
  for (const auto& layer : chain_.layers())
    if (layer->param_count() > 0) sizes.push_back(padded_params(layer->param_count()));
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
