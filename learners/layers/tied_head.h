#pragma once
// The language-model head tied to the token embedding (nanoGPT's lm_head.weight =
// wte.weight): logits[t] = x[t]·Wᵀ over the vocabulary, W the embedding's [vocab × C], no
// bias. It owns no parameters: two layers share one slice of the arena. Its backward writes
// dW = dlogitsᵀ·x into the embedding's gradient, and the embedding, tied, adds its scatter to
// that: the head comes after the embedding in the chain, so its backward runs first.
#include "learners/layers/embedding.h"

namespace starling {

class TiedHead final : public Layer {
 public:
  /// Ties `embedding`, which must come before this layer in the same chain (and so outlive
  /// its use here); marks it tied.
  explicit TiedHead(TokenEmbedding& embedding);

  std::string name() const override { return "tied_head(→" + std::to_string(embedding_.vocab()) + ")"; }
  Shape input_shape() const override { return {1, embedding_.context(), embedding_.width()}; }
  Shape output_shape() const override { return {1, embedding_.context(), embedding_.vocab()}; }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  TokenEmbedding& embedding_;
};

}  // namespace starling
