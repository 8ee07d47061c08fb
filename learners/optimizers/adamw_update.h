#pragma once
// AdamW's element-wise update over a span of the parameter arena in one vectorized pass
// (one implementation per ISA, picked by platform::IsaDispatch like the other kernels), and
// the squared gradient norm that global-norm clipping scales the gradient by.
//
// Per element, with g' = grad_scale·g (PyTorch's AdamW and clip_grad_norm_):
//   m ← β1·m + (1 − β1)·g'
//   v ← β2·v + (1 − β2)·g'²
//   w ← w·(1 − decay) − lr·(m·bias1) / (√(v·bias2) + ε)
#include <cstdint>

namespace starling {

struct AdamWArgs {
  float lr = 0.f;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  float bias1 = 1.f, bias2 = 1.f;  // 1 / (1 − β^t), the bias corrections at step t
  float decay = 0.f;               // lr·λ on the spans that are decayed, else 0
  float grad_scale = 1.f;          // clipping's min(1, clip_norm / (‖g‖ + 1e-6)), else 1
};

/// One AdamW step on n parameters w with gradient g and moments m, v (no aliasing).
void adamw_update(long n, float* w, const float* g, float* m, float* v, const AdamWArgs& args);

/// Σ g², accumulated in double.
double squared_norm(long n, const float* g);

}  // namespace starling
