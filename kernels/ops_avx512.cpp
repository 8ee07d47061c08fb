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
  // 16×16 blocks transposed in registers; the ragged edges by masks.
  static void transpose(int rows, int cols, const float* a, float* at) {
    for (int i0 = 0; i0 < rows; i0 += 16) {
      const __mmask16 down = lanes_for(rows - i0);
      for (int j0 = 0; j0 < cols; j0 += 16) {
        const __mmask16 across = lanes_for(cols - j0);
        __m512 r[16];
        for (int i = 0; i < 16; ++i)
          r[i] = i0 + i < rows ? _mm512_maskz_loadu_ps(across, a + static_cast<long>(i0 + i) * cols + j0) : _mm512_setzero_ps();
        transpose16(r);
        for (int j = 0; j < 16 && j0 + j < cols; ++j)
          _mm512_mask_storeu_ps(at + static_cast<long>(j0 + j) * rows + i0, down, r[j]);
      }
    }
  }
};

}  // namespace

constexpr OpsTable kOpsAvx512 = make_table<Avx512Runs>();

}  // namespace starling::kernels::ops_detail
