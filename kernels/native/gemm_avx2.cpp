// AVX2/FMA micro-kernel of the native GEMM: MR=6 rows × NR=16 columns (two ymm per row, 12
// accumulators + 2 B vectors + 1 broadcast = 15 of 16 registers) with the epilogue fused
// into the store. Compiled with -mavx2 -mfma for this file only.
#include "kernels/native/driver.h"
#include "kernels/native/isa_gemm.h"

#include <immintrin.h>

namespace starling::kernels::native {
namespace {

constexpr int kMR = 6;
constexpr int kNR = 16;

// Lane mask for the first `count` of 8 floats (all-ones lanes are loaded / stored).
inline __m256i lanes_for(int count) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), iota);
}

__attribute__((always_inline)) inline __m256 finish(__m256 v, const TileArgs& t, const float* c, int col, int row,
                     __m256i lanes) {
  const __m256 zero = _mm256_setzero_ps();
  if (t.load_c) v = _mm256_add_ps(v, _mm256_maskload_ps(c, lanes));
  if (t.bias) v = _mm256_add_ps(v, _mm256_maskload_ps(t.bias + col, lanes));
  if (t.relu) v = _mm256_max_ps(v, zero);
  if (t.mask) {
    const __m256 m = _mm256_maskload_ps(t.mask + row * t.ldmask + col, lanes);
    v = _mm256_and_ps(v, _mm256_cmp_ps(m, zero, _CMP_GT_OQ));
  }
  return v;
}

// Not inlined into the driver: a standalone function gets a clean register allocation for
// its accumulators, and one call per MR×NR×kc tile costs nothing measurable.
template <int MR, int NV, bool FULL, bool UNIT_RS>
__attribute__((noinline)) void tile_impl(const TileArgs& args) {
  // A private copy: the unaligned vector stores may alias anything, and would otherwise make
  // the compiler reload every field of the caller's TileArgs after each store of C.
  const TileArgs t = args;
  __m256 acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_ps();
  __m256i lanes[NV];
  for (int v = 0; v < NV; ++v) lanes[v] = lanes_for(FULL ? 8 : t.nr - 8 * v);
  const float* a = t.a;
  const float* b = t.b;
  const long rs = UNIT_RS ? 1 : t.a_rs;
  const long cs = t.a_cs;
  const long b_rs = t.b_rs;
#pragma GCC unroll 4
  for (int p = 0; p < t.kc; ++p) {
    __m256 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      bv[v] = FULL ? _mm256_loadu_ps(b + 8 * v) : _mm256_maskload_ps(b + 8 * v, lanes[v]);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i * rs);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += cs;
    b += b_rs;
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float* c = t.c + i * t.ldc;
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      _mm256_maskstore_ps(c + 8 * v, lanes[v], finish(acc[i][v], t, c + 8 * v, 8 * v, i, lanes[v]));
  }
}

template <int MR, int NV, bool FULL>
void pick_stride(const TileArgs& t) {
  if (t.a_rs == 1) tile_impl<MR, NV, FULL, true>(t);
  else tile_impl<MR, NV, FULL, false>(t);
}

template <int MR>
void pick_width(const TileArgs& t) {
  if (t.nr == 16) pick_stride<MR, 2, true>(t);
  else if (t.nr > 8) pick_stride<MR, 2, false>(t);
  else if (t.nr == 8) pick_stride<MR, 1, true>(t);
  else pick_stride<MR, 1, false>(t);
}

template <int MR>
void pick_rows(const TileArgs& t) {
  if constexpr (MR > 1) {
    if (t.mr < MR) return pick_rows<MR - 1>(t);
  }
  pick_width<MR>(t);
}

struct Avx2Kernel {
  static constexpr int MR = kMR;
  static constexpr int NR = kNR;
  static void tile(const TileArgs& t) { pick_rows<kMR>(t); }
};

}  // namespace

void gemm_avx2(const GemmArgs& args) {
  static const Blocking blocking = make_blocking(kMR, kNR);
  run_gemm<Avx2Kernel>(args, blocking);
}

}  // namespace starling::kernels::native
