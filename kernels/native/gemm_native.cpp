#include "kernels/native/gemm_native.h"

#include "kernels/epilogue.h"

namespace starling::kernels::native {

// Plain triple loop: correct for every argument combination; the blocked kernels replace it.
void gemm(const GemmArgs& a) {
  for (int i = 0; i < a.m; ++i) {
    float* c = a.c + static_cast<long>(i) * a.ldc;
    if (!a.accumulate)
      for (int j = 0; j < a.n; ++j) c[j] = 0.f;
    for (int p = 0; p < a.k; ++p) {
      const float av = a.trans_a ? a.a[static_cast<long>(p) * a.lda + i] : a.a[static_cast<long>(i) * a.lda + p];
      if (a.trans_b) {
        for (int j = 0; j < a.n; ++j) c[j] += av * a.b[static_cast<long>(j) * a.ldb + p];
      } else {
        const float* b = a.b + static_cast<long>(p) * a.ldb;
        for (int j = 0; j < a.n; ++j) c[j] += av * b[j];
      }
    }
  }
  if (detail::has_epilogue(a)) detail::apply_epilogue(a);
}

}  // namespace starling::kernels::native
