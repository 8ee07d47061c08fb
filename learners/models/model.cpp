#include "learners/models/model.h"

#include "learners/models/layer_factory.h"
#include "learners/models/model_description.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace starling {

namespace {

// Every model, the GPT included (learners/models/gpt.h), from its description.
LayerChain make_chain(const ModelSpec& spec) {
  const std::vector<LayerDesc> layers = describe_model(spec);
  return LayerChain(layers.front().in, make_layers(layers));
}

}  // namespace

Model::Model(const ModelSpec& spec) : spec_(spec), chain_(make_chain(spec)) {
  params_.resize(chain_.param_count());
  grads_.resize(chain_.param_count());
  chain_.bind(params_.data(), grads_.data());
}

void Model::init(uint64_t seed) {
  if (spec_.initial) {
    if (spec_.initial->size() != params_.size())
      throw std::invalid_argument("initial weights: " + std::to_string(spec_.initial->size()) + " values, this model has " +
                                  std::to_string(params_.size()));
    std::copy(spec_.initial->begin(), spec_.initial->end(), params_.data());
    return;
  }
  std::mt19937_64 rng(seed);
  chain_.init(rng);
}

const float* Model::forward(kernels::Backend backend, int batch, const float* x) {
  return chain_.forward(backend, batch, x);
}

void Model::backward(kernels::Backend backend, int batch, const float* x, const float* dlogits,
                     const ParamUpdate* update) {
  chain_.backward(backend, batch, x, dlogits, nullptr, update);
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
