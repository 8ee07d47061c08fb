// AVX2 build of the non-GEMM kernels (ops_impl.h), compiled with -mavx2 -mfma for this file
// only. Short im2col runs use inline vector moves instead of a memcpy call per run.
#include "kernels/ops_impl.h"

#include <immintrin.h>

namespace starling::kernels::ops_detail {
namespace {

struct Avx2Runs {
  static constexpr bool kSelectPoolGradient = true;
  // Tails by 4-float and single moves: vmaskmovps stores cost tens of cycles on AMD cores.
  static void copy(float* d, const float* s, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
    if (i + 4 <= n) {
      _mm_storeu_ps(d + i, _mm_loadu_ps(s + i));
      i += 4;
    }
    for (; i < n; ++i) d[i] = s[i];
  }
  using Fixed = PlainFixed<Avx2Runs>;
  static void transpose(int rows, int cols, const float* a, float* at) { blocked_transpose(rows, cols, a, at); }
};

}  // namespace

constexpr OpsTable kOpsAvx2 = make_table<Avx2Runs>();

}  // namespace starling::kernels::ops_detail
