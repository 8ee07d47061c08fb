#include "learners/models/layer_chain.h"

#include <algorithm>
#include <cstring>

namespace starling {

LayerChain::LayerChain(Shape input, std::vector<std::unique_ptr<Layer>> layers)
    : input_(input), layers_(std::move(layers)), first_trainable_(layers_.size()), acts_(layers_.size()) {
  for (std::size_t i = layers_.size(); i-- > 0;)
    if (layers_[i]->param_count() > 0) first_trainable_ = i;
}

Shape LayerChain::output_shape() const { return layers_.empty() ? input_ : layers_.back()->output_shape(); }

std::size_t LayerChain::param_count() const {
  std::size_t total = 0;
  for (const auto& layer : layers_) total += padded_params(layer->param_count());
  return total;
}

std::vector<ParamSpan> LayerChain::matrix_spans() const {
  std::vector<ParamSpan> spans;
  std::size_t offset = 0;
  for (const auto& layer : layers_) {
    append_shifted(spans, layer->matrix_spans(), offset);
    offset += padded_params(layer->param_count());
  }
  return spans;
}

void LayerChain::bind(float* params, float* grads) {
  params_of_.clear();
  grads_of_.clear();
  std::size_t offset = 0;
  for (auto& layer : layers_) {
    layer->bind(params + offset, grads + offset);
    params_of_.push_back(params + offset);
    grads_of_.push_back(grads + offset);
    offset += padded_params(layer->param_count());
  }
}

void LayerChain::init(std::mt19937_64& rng) {
  for (auto& layer : layers_) layer->init(rng);
}

void LayerChain::set_mode(bool training, uint64_t key) {
  for (auto& layer : layers_) layer->set_mode(training, key);
}

void LayerChain::reserve(int batch) {
  if (batch <= reserved_batch_) return;
  acts_.resize(layers_.size());
  long widest = input_.size();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const long out = layers_[i]->output_shape().size();
    widest = std::max(widest, out);
    if (!layers_[i]->renames_only()) acts_[i].resize(static_cast<std::size_t>(batch) * out);
    layers_[i]->reserve(batch);
  }
  grad_a_.resize(static_cast<std::size_t>(batch) * widest);
  grad_b_.resize(static_cast<std::size_t>(batch) * widest);
  reserved_batch_ = batch;
}

const float* LayerChain::forward(kernels::Backend backend, int batch, const float* x) {
  reserve(batch);
  const float* in = x;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i]->renames_only()) continue;
    layers_[i]->forward(backend, batch, in, acts_[i].data());
    in = acts_[i].data();
  }
  return in;
}

// Layer i's output in the last forward on x: its activations, or, where it only renames,
// its input's.
const float* LayerChain::output_of(std::size_t i, const float* x) const {
  for (;; --i) {
    if (!layers_[i]->renames_only()) return acts_[i].data();
    if (i == 0) return x;
  }
}

void LayerChain::backward(kernels::Backend backend, int batch, const float* x, const float* dy, float* dx,
                          const ParamUpdate* update) {
  const std::size_t last = dx ? 0 : first_trainable();
  float* next = grad_a_.data();
  for (std::size_t i = layers_.size(); i-- > last;) {
    Layer& layer = *layers_[i];
    if (layer.renames_only()) continue;  // the gradient passes back as it is
    const float* in = i == 0 ? x : output_of(i - 1, x);
    float* out = i == last ? dx : next;
    if (!update || !layer.backward_update(backend, batch, in, acts_[i].data(), dy, out, *update)) {
      layer.backward(backend, batch, in, acts_[i].data(), dy, out);
      if (update && layer.param_count() > 0) update->apply(params_of_[i], grads_of_[i], layer.param_count());
    }
    dy = out;
    next = next == grad_a_.data() ? grad_b_.data() : grad_a_.data();
  }
  // An empty chain, or one that begins with renaming layers, hands dy back as it came.
  if (dx && dy != dx) std::memcpy(dx, dy, sizeof(float) * static_cast<std::size_t>(batch) * input_.size());
}

}  // namespace starling
