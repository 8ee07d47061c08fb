#include "learners/layers/residual.h"

#include "kernels/ops.h"

#include <stdexcept>

namespace starling {
namespace {

std::string names(const LayerChain& chain) {
  std::string out;
  for (const auto& layer : chain.layers()) out += (out.empty() ? "" : ", ") + layer->name();
  return out.empty() ? "identity" : out;
}

}  // namespace

Residual::Residual(LayerChain body, LayerChain shortcut) : body_(std::move(body)), shortcut_(std::move(shortcut)) {
  if (!(body_.input_shape() == shortcut_.input_shape()) || !(body_.output_shape() == shortcut_.output_shape()))
    throw std::invalid_argument("residual: the body and the shortcut give different shapes");
}

std::string Residual::name() const {
  return "residual(" + names(body_) + " + " + names(shortcut_) + (relu_output_ ? ", relu)" : ")");
}

std::vector<ParamSpan> Residual::matrix_spans() const {
  std::vector<ParamSpan> spans = body_.matrix_spans();
  append_shifted(spans, shortcut_.matrix_spans(), body_.param_count());
  return spans;
}

void Residual::bind(float* params, float* grads) {
  body_.bind(params, grads);
  shortcut_.bind(params + body_.param_count(), grads + body_.param_count());
}

void Residual::init(std::mt19937_64& rng) {
  body_.init(rng);
  shortcut_.init(rng);
}

void Residual::set_mode(bool training, uint64_t key) {
  body_.set_mode(training, key);
  shortcut_.set_mode(training, key);
}

void Residual::reserve(int batch) {
  body_.reserve(batch);
  shortcut_.reserve(batch);
  dx_shortcut_.reserve(static_cast<std::size_t>(batch) * input_shape().size());
  if (relu_output_) dy_masked_.reserve(static_cast<std::size_t>(batch) * output_shape().size());
}

void Residual::forward(kernels::Backend backend, int batch, const float* x, float* y) {
  const float* a = body_.forward(backend, batch, x);
  const float* b = shortcut_.forward(backend, batch, x);
  const long n = batch * output_shape().size();
  if (relu_output_) {
    for (long i = 0; i < n; ++i) y[i] = a[i] + b[i] > 0.f ? a[i] + b[i] : 0.f;
  } else {
    for (long i = 0; i < n; ++i) y[i] = a[i] + b[i];
  }
}

// Both paths get the same output gradient (masked by the fused ReLU); an identity shortcut's
// input gradient is that gradient itself, added without running the empty chain.
void Residual::backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                        float* dx) {
  reserve(batch);
  if (relu_output_) {
    kernels::relu_backward(batch * output_shape().size(), y, dy, dy_masked_.data());
    dy = dy_masked_.data();
  }
  body_.backward(backend, batch, x, dy, dx);
  const long n = batch * input_shape().size();
  if (shortcut_.layers().empty()) {
    if (dx)
      for (long i = 0; i < n; ++i) dx[i] += dy[i];
    return;
  }
  shortcut_.backward(backend, batch, x, dy, dx ? dx_shortcut_.data() : nullptr);
  if (dx)
    for (long i = 0; i < n; ++i) dx[i] += dx_shortcut_[i];
}

}  // namespace starling
