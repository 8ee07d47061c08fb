// The LM head on the token embedding's weights (learners/layers/tied_head.h).
#include "learners/layers/tied_head.h"

namespace starling {

TiedHead::TiedHead(TokenEmbedding& embedding) : embedding_(embedding) { embedding_.set_tied(true); }

void TiedHead::forward(kernels::Backend backend, int batch, const float* x, float* y) {
  const int tokens = batch * embedding_.context(), width = embedding_.width(), vocab = embedding_.vocab();
  kernels::GemmArgs g;  // logits = x·Wᵀ
  g.m = tokens, g.n = vocab, g.k = width;
  g.a = x, g.lda = width;
  g.b = embedding_.weights(), g.ldb = width, g.trans_b = true;
  g.c = y, g.ldc = vocab;
  kernels::gemm(backend, g);
}

void TiedHead::backward(kernels::Backend backend, int batch, const float* x, const float*, const float* dy, float* dx) {
  const int tokens = batch * embedding_.context(), width = embedding_.width(), vocab = embedding_.vocab();
  if (dx) {
    kernels::GemmArgs g;  // dx = dlogits·W
    g.m = tokens, g.n = width, g.k = vocab;
    g.a = dy, g.lda = vocab;
    g.b = embedding_.weights(), g.ldb = width;
    g.c = dx, g.ldc = width;
    kernels::gemm(backend, g);
  }
  kernels::GemmArgs g;  // dW = dlogitsᵀ·x, overwriting: the embedding's backward adds to it
  g.m = vocab, g.n = width, g.k = tokens;
  g.a = dy, g.lda = vocab, g.trans_a = true;
  g.b = x, g.ldb = width;
  g.c = embedding_.weight_grads(), g.ldc = width;
  kernels::gemm(backend, g);
}

}  // namespace starling
