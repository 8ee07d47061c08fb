// Token and position embeddings (learners/layers/embedding.h).
#include "learners/layers/embedding.h"

#include <algorithm>
#include <cstring>

namespace starling {
namespace {

void init_normal(float* w, std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.f, kGptInitStd);
  for (std::size_t i = 0; i < n; ++i) w[i] = normal(rng);
}

// The id a float input holds; throws on anything but an integer in [0, vocab).
int token_id(float x, int vocab) {
  const auto id = static_cast<int>(x);
  if (!(x >= 0.f && x < static_cast<float>(vocab)) || static_cast<float>(id) != x)
    throw TokenError("token_embedding: input " + std::to_string(x) + " is not a token id in [0, " +
                     std::to_string(vocab) + ")");
  return id;
}

}  // namespace

TokenEmbedding::TokenEmbedding(int context, int vocab, int width) : context_(context), vocab_(vocab), width_(width) {
  if (context < 1 || vocab < 1 || width < 1)
    throw std::invalid_argument("token_embedding: context, vocabulary and width must be positive");
}

std::string TokenEmbedding::name() const {
  return "token_embedding(" + std::to_string(vocab_) + "→" + std::to_string(width_) + ")";
}

void TokenEmbedding::bind(float* params, float* grads) { w_ = params, dw_ = grads; }

void TokenEmbedding::init(std::mt19937_64& rng) { init_normal(w_, param_count(), rng); }

void TokenEmbedding::forward(kernels::Backend, int batch, const float* x, float* y) {
  const long tokens = static_cast<long>(batch) * context_;
  for (long t = 0; t < tokens; ++t)
    std::memcpy(y + t * width_, w_ + static_cast<long>(token_id(x[t], vocab_)) * width_, sizeof(float) * width_);
}

void TokenEmbedding::backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  if (!tied_) std::fill(dw_, dw_ + param_count(), 0.f);
  const long tokens = static_cast<long>(batch) * context_;
  for (long t = 0; t < tokens; ++t) {
    float* row = dw_ + static_cast<long>(token_id(x[t], vocab_)) * width_;
    const float* g = dy + t * width_;
    for (int c = 0; c < width_; ++c) row[c] += g[c];
  }
  if (dx) std::fill(dx, dx + tokens, 0.f);
}

PositionEmbedding::PositionEmbedding(int context, int width) : context_(context), width_(width) {
  if (context < 1 || width < 1) throw std::invalid_argument("position_embedding: context and width must be positive");
}

void PositionEmbedding::bind(float* params, float* grads) { p_ = params, dp_ = grads; }

void PositionEmbedding::init(std::mt19937_64& rng) { init_normal(p_, param_count(), rng); }

void PositionEmbedding::forward(kernels::Backend, int batch, const float* x, float* y) {
  const long n = static_cast<long>(param_count());
  for (int b = 0; b < batch; ++b)
    for (long i = 0; i < n; ++i) y[b * n + i] = x[b * n + i] + p_[i];
}

void PositionEmbedding::backward(kernels::Backend, int batch, const float*, const float*, const float* dy, float* dx) {
  const long n = static_cast<long>(param_count());
  std::fill(dp_, dp_ + n, 0.f);
  for (int b = 0; b < batch; ++b)
    for (long i = 0; i < n; ++i) dp_[i] += dy[b * n + i];
  if (dx && dx != dy) std::copy(dy, dy + static_cast<long>(batch) * n, dx);
}

}  // namespace starling
