// AVX2 FMA throughput loop: 12 independent ymm chains (≥ 4-cycle latency × 2 pipes).
#include "fma_peak.h"

#include <immintrin.h>

namespace starling::bench {

namespace {

template <bool STORE>
double loop(long iterations, float* stores) {
  // Named variables, not an array: an array of vectors gets spilled around the asm barrier.
  __m256 a0 = _mm256_set1_ps(0.f), a1 = _mm256_set1_ps(1.f), a2 = _mm256_set1_ps(2.f), a3 = _mm256_set1_ps(3.f);
  __m256 a4 = _mm256_set1_ps(4.f), a5 = _mm256_set1_ps(5.f), a6 = _mm256_set1_ps(6.f), a7 = _mm256_set1_ps(7.f);
  __m256 a8 = _mm256_set1_ps(8.f), a9 = _mm256_set1_ps(9.f), a10 = _mm256_set1_ps(10.f), a11 = _mm256_set1_ps(11.f);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm256_fmadd_ps(a0, x, y);
    a1 = _mm256_fmadd_ps(a1, x, y);
    a2 = _mm256_fmadd_ps(a2, x, y);
    a3 = _mm256_fmadd_ps(a3, x, y);
    a4 = _mm256_fmadd_ps(a4, x, y);
    a5 = _mm256_fmadd_ps(a5, x, y);
    a6 = _mm256_fmadd_ps(a6, x, y);
    a7 = _mm256_fmadd_ps(a7, x, y);
    a8 = _mm256_fmadd_ps(a8, x, y);
    a9 = _mm256_fmadd_ps(a9, x, y);
    a10 = _mm256_fmadd_ps(a10, x, y);
    a11 = _mm256_fmadd_ps(a11, x, y);
    if constexpr (STORE) {  // half the chains, to one of 8 rows of 6 vectors
      float* row = stores + (i & 7) * 6 * 8;
      _mm256_store_ps(row, a0), _mm256_store_ps(row + 8, a1), _mm256_store_ps(row + 2 * 8, a2);
      _mm256_store_ps(row + 3 * 8, a3), _mm256_store_ps(row + 4 * 8, a4), _mm256_store_ps(row + 5 * 8, a5);
    }
    // Keeps every chain live so the compiler cannot fold or drop the loop.
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                     "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
  }
  const __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)),
                                             _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11))));
  alignas(64) float lanes[8];
  _mm256_store_ps(lanes, sum);
  volatile float sink = lanes[0];
  (void)sink;
  return 2.0 * 8 * 12 * static_cast<double>(iterations);
}

}  // namespace

double fma_loop_avx2(long iterations, float* stores) {
  return stores ? loop<true>(iterations, stores) : loop<false>(iterations, nullptr);
}

}  // namespace starling::bench
