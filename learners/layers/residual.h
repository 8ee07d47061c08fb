#pragma once
// A residual block: y = body(x) + shortcut(x), the shortcut the identity when empty or a
// projection (a strided 1×1 convolution and a normalisation, say) where the body changes the
// shape. x feeds both, so its gradient is the sum of the two paths'. A ReLU after the block
// is applied with the sum (absorbs_relu).
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"
#include "learners/models/layer_chain.h"

namespace starling {

class Residual final : public Layer {
 public:
  /// Throws std::invalid_argument unless both chains take the same input and give the same
  /// output shape.
  Residual(LayerChain body, LayerChain shortcut);

  std::string name() const override;
  Shape input_shape() const override { return body_.input_shape(); }
  Shape output_shape() const override { return body_.output_shape(); }
  std::size_t param_count() const override { return body_.param_count() + shortcut_.param_count(); }
  std::vector<ParamSpan> matrix_spans() const override;
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void reserve(int batch) override;
  void set_mode(bool training, uint64_t key) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;
  bool can_apply_relu() const override { return true; }
  bool absorbs_relu() const override { return true; }
  LayerChain& body() { return body_; }
  LayerChain& shortcut() { return shortcut_; }

 private:
  LayerChain body_, shortcut_;
  AlignedBuffer<float> dx_shortcut_;
  AlignedBuffer<float> dy_masked_;  // dy through the fused ReLU
};

}  // namespace starling
