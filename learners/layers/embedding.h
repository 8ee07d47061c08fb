#pragma once
// The embeddings at the bottom of a GPT, on sequences [T × C] with NHWC shape {1, T, C}.
//
// TokenEmbedding: the input is T token ids per sample, stored as floats (exact below 2^24,
// so that the model's one float input carries them), shape {1, T, 1}; y[t] = W[id_t], with
// W [vocab × C]. Its backward scatter-adds dy into the rows of W the ids name; token ids take
// no gradient (dx, when asked for, is zero). An id outside [0, vocab) throws.
//
// PositionEmbedding: y[t] = x[t] + P[t], with P [T × C] learned; dP sums dy over the batch.
//
// Both are matrices that AdamW decays (nanoGPT decays wte and wpe) and start from N(0, 0.02).
#include "learners/models/layer.h"

#include <stdexcept>

namespace starling {

/// A token id outside the vocabulary.
class TokenError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class TokenEmbedding final : public Layer {
 public:
  /// Throws std::invalid_argument unless context, vocab and width are positive.
  TokenEmbedding(int context, int vocab, int width);

  std::string name() const override;
  Shape input_shape() const override { return {1, context_, 1}; }
  Shape output_shape() const override { return {1, context_, width_}; }
  std::size_t param_count() const override { return static_cast<std::size_t>(vocab_) * width_; }
  std::vector<ParamSpan> matrix_spans() const override { return {{0, param_count()}}; }
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

  int context() const { return context_; }
  int vocab() const { return vocab_; }
  int width() const { return width_; }
  const float* weights() const { return w_; }
  float* weight_grads() { return dw_; }
  /// Tied to an LM head (learners/layers/tied_head.h): the backward adds its scatter to the
  /// weight gradient that the head's backward, run before it, wrote, rather than clearing it.
  void set_tied(bool tied) { tied_ = tied; }

 private:
  int context_, vocab_, width_;
  bool tied_ = false;
  float* w_ = nullptr;
  float* dw_ = nullptr;
};

class PositionEmbedding final : public Layer {
 public:
  /// Throws std::invalid_argument unless context and width are positive.
  PositionEmbedding(int context, int width);

  std::string name() const override { return "position_embedding"; }
  Shape input_shape() const override { return {1, context_, width_}; }
  Shape output_shape() const override { return {1, context_, width_}; }
  std::size_t param_count() const override { return static_cast<std::size_t>(context_) * width_; }
  std::vector<ParamSpan> matrix_spans() const override { return {{0, param_count()}}; }
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  int context_, width_;
  float* p_ = nullptr;
  float* dp_ = nullptr;
};

/// nanoGPT's initial weights: N(0, 0.02).
inline constexpr float kGptInitStd = 0.02f;

}  // namespace starling
