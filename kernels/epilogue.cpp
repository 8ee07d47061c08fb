#include "kernels/epilogue.h"

#include "kernels/ops.h"

#include <stdexcept>
#include <vector>

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

void gemm_then_sgd(const GemmArgs& a, void (*product)(const GemmArgs&)) {
  thread_local std::vector<float> gradient;
  gradient.resize(static_cast<std::size_t>(a.m) * a.n);
  GemmArgs p = a;
  p.velocity = nullptr;
  p.c = gradient.data();
  p.ldc = a.n;
  product(p);
  if (a.ldc == a.n) return sgd_step(static_cast<long>(a.m) * a.n, a.c, gradient.data(), a.velocity, a.sgd);
  for (int i = 0; i < a.m; ++i) {
    const long row = static_cast<long>(i) * a.ldc;
    sgd_step(a.n, a.c + row, gradient.data() + static_cast<long>(i) * a.n, a.velocity + row, a.sgd);
  }
}

void check_sgd_epilogue(const GemmArgs& a) {
  if (a.velocity && (a.accumulate || has_epilogue(a)))
    throw std::invalid_argument("gemm: the SGD epilogue (velocity) excludes accumulate, bias, relu and relu_mask");
}

}  // namespace starling::kernels::detail
