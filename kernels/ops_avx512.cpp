// AVX-512 build of the non-GEMM kernels (ops_impl.h), compiled with AVX-512 F/BW/DQ/VL for
// this file only. Short im2col runs use one masked 16-float move instead of a memcpy call;
// transposes go 16×16 blocks at a time through registers.
#include "kernels/ops_impl.h"
#include "kernels/transpose16_avx512.h"

#include <immintrin.h>

namespace starling::kernels::ops_detail {
namespace {

struct Avx512Runs {
  static constexpr bool kSelectPoolGradient = true;
  static void copy(float* d, const float* s, long n) {
    long i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_loadu_ps(s + i));
    if (i == n) return;
    const __mmask16 lanes = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(d + i, lanes, _mm512_maskz_loadu_ps(lanes, s + i));
  }
  class Fixed {
   public:
    explicit Fixed(long n) : n_(n), lanes_(n < 16 ? static_cast<__mmask16>((1u << n) - 1) : 0) {}
    void copy(float* d, const float* s) const {
      if (n_ < 16) _mm512_mask_storeu_ps(d, lanes_, _mm512_maskz_loadu_ps(lanes_, s));
      else Avx512Runs::copy(d, s, n_);
    }

   private:
    long n_;
    __mmask16 lanes_;
  };
  static void transpose(int rows, int cols, const float* a, float* at) { transpose_blocks(rows, cols, a, cols, at, rows); }
};

}  // namespace

constexpr OpsTable kOpsAvx512 = make_table<Avx512Runs>();

}  // namespace starling::kernels::ops_detail
