// AVX2 weight gradient of the direct convolution (kernels/direct_conv.h), without im2col,
// with tiles for 16 ymm registers (the walk is direct_conv_grad_walk.h's):
// dW[q, o] = Σ over output pixels of window(pixel)[q] · dy[pixel, o], where the window's row
// kh is kernel·in_c contiguous floats of the zero-bordered input. A tile of the gradient
// stays in registers while the pixels of a chunk of samples stream by, in one of two forms:
// - wide inputs (in_c in 16s): dWᵀ, 4 output channels × 8·NV window floats inside one
//   window row (NV = 3 where rows come in 24s); a GEMM whose B rows are read from the input
//   in place, one pixel apart;
// - narrow inputs (a window row of at most 15 floats, too short for those vectors): dW, KR
//   window rows × 8·NV output channels, each window float a broadcast.
// Compiled with -mavx2 -mfma for this file only.
#include "kernels/native/direct_conv_grad_walk.h"
#include "kernels/native/direct_conv_isa.h"

#include <immintrin.h>

#include <algorithm>

namespace starling::kernels::native {
namespace {

template <int ROWS, int NV>
__attribute__((always_inline)) inline void load_tile(__m256 (&acc)[ROWS][NV], const GradTile& t) {
#pragma GCC unroll 32
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[i][v] = t.accumulate ? _mm256_loadu_ps(t.dw + i * t.ldw + 8 * v) : _mm256_setzero_ps();
}

template <int ROWS, int NV>
__attribute__((always_inline)) inline void store_tile(const __m256 (&acc)[ROWS][NV], const GradTile& t) {
#pragma GCC unroll 32
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) _mm256_storeu_ps(t.dw + i * t.ldw + 8 * v, acc[i][v]);
}

// Wide inputs: 4 output channels (broadcasts of dy) × NV vectors of window floats: 12
// accumulators at NV = 3, with 3 loads and 4 broadcasts per 12 multiply-adds.
constexpr int kWideRows = 4;

template <int NV>
__attribute__((noinline)) void wide_tile(const GradTile& args) {
  const GradTile t = args;  // a private copy: the stores below may alias anything
  __m256 acc[kWideRows][NV];
  load_tile(acc, t);
  for_each_pixel(t, [&](const float* x, const float* g) {
    __m256 bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_loadu_ps(x + 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < kWideRows; ++i) {
      const __m256 gi = _mm256_broadcast_ss(g + i);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(gi, bv[v], acc[i][v]);
    }
  });
  store_tile(acc, t);
}

// Narrow inputs: KR window rows of SEG floats (broadcasts of the input) × NV vectors of channels.
template <int SEG, int KR, int NV>
__attribute__((noinline)) void narrow_tile(const GradTile& args) {
  const GradTile t = args;  // a private copy: the stores below may alias anything
  __m256 acc[KR * SEG][NV];
  load_tile(acc, t);
  for_each_pixel(t, [&](const float* x, const float* g) {
    __m256 gv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) gv[v] = _mm256_loadu_ps(g + 8 * v);
#pragma GCC unroll 4
    for (int r = 0; r < KR; ++r)
#pragma GCC unroll 16
      for (int j = 0; j < SEG; ++j) {
        const __m256 a = _mm256_broadcast_ss(x + r * t.padded_row + j);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[r * SEG + j][v] = _mm256_fmadd_ps(a, gv[v], acc[r * SEG + j][v]);
      }
  });
  store_tile(acc, t);
}

// Window rows per tile: as many as leave room, beside the accumulators, for the channel
// vectors of dy and a broadcast; no more than a kernel of SEG floats a row can have. (A
// window row of 15 floats keeps one accumulator in memory: correct, only slower.)
template <int SEG, int NV>
constexpr int rows_per_tile() {
  return std::min(SEG, std::max(1, (16 - NV - 1) / (SEG * NV)));
}

// A tile of `kr` ≤ KR window rows: the instantiation for exactly kr.
template <int SEG, int KR, int NV>
void narrow_rows(int kr, const GradTile& t) {
  if constexpr (KR > 1) {
    if (kr < KR) return narrow_rows<SEG, KR - 1, NV>(kr, t);
  }
  narrow_tile<SEG, KR, NV>(t);
}

// Narrow inputs with NV vectors of channels per tile, as many window rows as fit.
template <int SEG, int NV>
void narrow(const ConvShape& s, const float* xp, const float* dy, float* dw, bool accumulate) {
  constexpr int KR = rows_per_tile<SEG, NV>();
  run_narrow<SEG, KR, 8 * NV>(s, xp, dy, dw, accumulate, narrow_rows<SEG, KR, NV>);
}

}  // namespace

void direct_conv_weight_gradient_avx2(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate) {
  const int row = s.kernel * s.in_c;  // a multiple of 16: in_c is
  if (row % 24 == 0) return run_wide<kWideRows, 8 * 3>(s, xp, dy, dwt, accumulate, wide_tile<3>);
  run_wide<kWideRows, 8 * 2>(s, xp, dy, dwt, accumulate, wide_tile<2>);
}

bool narrow_window_row_avx2(const ConvShape& s) {
  return with_narrow_segment(s.kernel * s.in_c, [](auto) {});
}

void direct_conv_narrow_weight_gradient_avx2(const ConvShape& s, const float* xp, const float* dy, float* dw,
                                              bool accumulate) {
  with_narrow_segment(s.kernel * s.in_c, [&](auto segment) {
    constexpr int SEG = decltype(segment)::value;
    // Two vectors of channels where their accumulators leave room (dy's and a broadcast).
    if (s.out_c % 16 == 0 && 2 * SEG + 3 <= 16) narrow<SEG, 2>(s, xp, dy, dw, accumulate);
    else narrow<SEG, 1>(s, xp, dy, dw, accumulate);
  });
}

}  // namespace starling::kernels::native
