#include "kernels/epilogue.h"

namespace starling::kernels::detail {

bool has_epilogue(const GemmArgs& a) { return a.bias || a.relu || a.relu_mask; }

void apply_epilogue(const GemmArgs& a) {
  for (int i = 0; i < a.m; ++i) {
    float* c = a.c + static_cast<long>(i) * a.ldc;
    if (a.bias)
      for (int j = 0; j < a.n; ++j) c[j] += a.bias[j];
    if (a.relu)
      for (int j = 0; j < a.n; ++j) c[j] = c[j] > 0.f ? c[j] : 0.f;
    if (a.relu_mask) {
      const float* mask = a.relu_mask + static_cast<long>(i) * a.ldmask;
      for (int j = 0; j < a.n; ++j) c[j] = mask[j] > 0.f ? c[j] : 0.f;
    }
  }
}

}  // namespace starling::kernels::detail
