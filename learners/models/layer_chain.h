#pragma once
// Layers run in order, each reading the one before's output: the activations they keep for
// the backward pass and the two gradient buffers it alternates between. A model is one chain;
// a residual block holds two (its body and its shortcut).
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

#include <memory>
#include <random>
#include <vector>

namespace starling {

class LayerChain {
 public:
  LayerChain(Shape input, std::vector<std::unique_ptr<Layer>> layers);

  Shape input_shape() const { return input_; }
  /// The last layer's output shape (the input's for an empty chain: the identity).
  Shape output_shape() const;
  std::vector<std::unique_ptr<Layer>>& layers() { return layers_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }

  /// The chain's span of the arena: each layer's parameters padded to 64 bytes.
  std::size_t param_count() const;
  /// Every layer's matrix_spans() at its offset in the chain's span.
  std::vector<ParamSpan> matrix_spans() const;
  void bind(float* params, float* grads);
  void init(std::mt19937_64& rng);
  void reserve(int batch);
  void set_mode(bool training, uint64_t key);

  /// Returns the output [batch × output size]; valid until the next forward. An empty chain
  /// returns x itself.
  const float* forward(kernels::Backend backend, int batch, const float* x);
  /// Overwrites every layer's parameter gradients and, unless null, dx; needs the forward's
  /// activations for this x. Without dx, the backward stops at the first layer with
  /// parameters, which computes no input gradient (the MLP's first dense layer would
  /// otherwise compute one as large as its weight gradient, for a flatten to discard).
  /// With `update`, each layer's parameters take that step as their gradients come out
  /// (Layer::backward_update), and the gradients are left undefined.
  void backward(kernels::Backend backend, int batch, const float* x, const float* dy, float* dx,
                const ParamUpdate* update = nullptr);
  /// The first layer with parameters (the layer count when none has any).
  std::size_t first_trainable() const { return first_trainable_; }

 private:
  const float* output_of(std::size_t i, const float* x) const;

  Shape input_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::size_t first_trainable_;
  std::vector<float*> params_of_, grads_of_;  // each layer's views, from bind()
  std::vector<AlignedBuffer<float>> acts_;  // empty for a layer that renames_only()
  AlignedBuffer<float> grad_a_, grad_b_;
  int reserved_batch_ = 0;
};

/// A layer's span of the arena: its parameters padded to 16 floats (64 bytes), so that
/// every view starts aligned.
inline std::size_t padded_params(std::size_t count) { return (count + 15) / 16 * 16; }

}  // namespace starling
