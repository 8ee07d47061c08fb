// AVX-512 FMA throughput loop: 12 independent zmm chains (≥ 4-cycle latency × 2 pipes).
#include "fma_peak.h"

#include <immintrin.h>

namespace starling::bench {

namespace {

template <bool STORE>
double loop(long iterations, float* stores) {
  // Named variables, not an array: an array of vectors gets spilled around the asm barrier.
  __m512 a0 = _mm512_set1_ps(0.f), a1 = _mm512_set1_ps(1.f), a2 = _mm512_set1_ps(2.f), a3 = _mm512_set1_ps(3.f);
  __m512 a4 = _mm512_set1_ps(4.f), a5 = _mm512_set1_ps(5.f), a6 = _mm512_set1_ps(6.f), a7 = _mm512_set1_ps(7.f);
  __m512 a8 = _mm512_set1_ps(8.f), a9 = _mm512_set1_ps(9.f), a10 = _mm512_set1_ps(10.f), a11 = _mm512_set1_ps(11.f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm512_fmadd_ps(a0, x, y);
    a1 = _mm512_fmadd_ps(a1, x, y);
    a2 = _mm512_fmadd_ps(a2, x, y);
    a3 = _mm512_fmadd_ps(a3, x, y);
    a4 = _mm512_fmadd_ps(a4, x, y);
    a5 = _mm512_fmadd_ps(a5, x, y);
    a6 = _mm512_fmadd_ps(a6, x, y);
    a7 = _mm512_fmadd_ps(a7, x, y);
    a8 = _mm512_fmadd_ps(a8, x, y);
    a9 = _mm512_fmadd_ps(a9, x, y);
    a10 = _mm512_fmadd_ps(a10, x, y);
    a11 = _mm512_fmadd_ps(a11, x, y);
    if constexpr (STORE) {  // half the chains, to one of 8 rows of 6 vectors
      float* row = stores + (i & 7) * 6 * 16;
      _mm512_store_ps(row, a0), _mm512_store_ps(row + 16, a1), _mm512_store_ps(row + 2 * 16, a2);
      _mm512_store_ps(row + 3 * 16, a3), _mm512_store_ps(row + 4 * 16, a4), _mm512_store_ps(row + 5 * 16, a5);
    }
    // Keeps every chain live so the compiler cannot fold or drop the loop.
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5),
                     "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)),
                                             _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11))));
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  volatile float sink = lanes[0];
  (void)sink;
  return 2.0 * 16 * 12 * static_cast<double>(iterations);
}

}  // namespace

double fma_loop_avx512(long iterations, float* stores) {
  return stores ? loop<true>(iterations, stores) : loop<false>(iterations, nullptr);
}

}  // namespace starling::bench
