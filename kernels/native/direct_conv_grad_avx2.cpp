// AVX2 weight gradient of the direct convolution (kernels/direct_conv.h), without im2col, the
// AVX-512 file's loops for 16 ymm registers:
// dW[q, o] = Σ over output pixels of window(pixel)[q] · dy[pixel, o], where the window's row
// kh is kernel·in_c contiguous floats of the zero-bordered input. A tile of the gradient
// stays in registers while the pixels of a chunk of samples stream by, in one of two forms:
// - wide inputs (in_c in 16s): dWᵀ, 4 output channels × 8·NV window floats inside one
//   window row (NV = 3 where rows come in 24s); a GEMM whose B rows are read from the input
//   in place, one pixel apart;
// - narrow inputs (a window row of at most 15 floats, too short for those vectors): dW, KR
//   window rows × 8·NV output channels, each window float a broadcast.
// Compiled with -mavx2 -mfma for this file only.
#include "kernels/native/direct_conv_isa.h"

#include <immintrin.h>

#include <algorithm>
#include <type_traits>

namespace starling::kernels::native {
namespace {

constexpr long kChunkBytes = 512 << 10;  // dy and input of a chunk of samples, kept in L2 across its tiles

struct GradTile {
  const float* x = nullptr;   // the chunk's first window, at this tile's window row and columns
  const float* dy = nullptr;  // the chunk's first pixel, at this tile's output channels
  int samples = 0, out_h = 0, out_w = 0;
  long pixel = 0;          // in_c: from one window to the next along a row
  long padded_row = 0;     // floats of a padded input row (and from one window row to the next)
  long padded_sample = 0;  // floats of a padded input sample
  long out_c = 0;          // from one pixel's dy to the next
  float* dw = nullptr;     // the tile's first row in the gradient
  long ldw = 0;            // from one of its rows to the next
  bool accumulate = false;
};

// The tile's shape and pixel walk for one convolution; each chunk of samples sets samples,
// accumulate and the pointers.
GradTile walk_of(const ConvShape& s) {
  GradTile t;
  t.out_h = s.out_h(), t.out_w = s.out_w(), t.pixel = s.in_c, t.out_c = s.out_c;
  t.padded_row = static_cast<long>(s.in_w + 2 * s.pad) * s.in_c;
  t.padded_sample = static_cast<long>(s.in_h + 2 * s.pad) * t.padded_row;
  return t;
}

int samples_per_chunk(const ConvShape& s, const GradTile& t) {
  const long bytes = 4 * (static_cast<long>(t.out_h) * t.out_w * t.out_c + t.padded_sample);
  return static_cast<int>(std::clamp<long>(kChunkBytes / bytes, 1, s.batch));
}

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

// f(x, g) for every output pixel of the chunk: x its window at the tile's row and columns,
// g its dy at the tile's channels.
template <class F>
__attribute__((always_inline)) inline void for_each_pixel(const GradTile& t, F f) {
  const float* g = t.dy;
  for (int n = 0; n < t.samples; ++n)
    for (int h = 0; h < t.out_h; ++h) {
      const float* x = t.x + n * t.padded_sample + h * t.padded_row;
#pragma GCC unroll 2
      for (int w = 0; w < t.out_w; ++w, x += t.pixel, g += t.out_c) f(x, g);
    }
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

// dWᵀ (out_c × patch), chunk by chunk of samples, tile by tile.
template <int NV>
void run_wide(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate) {
  const int row = s.kernel * s.in_c;
  const long patch = s.patch(), out_sample = static_cast<long>(s.out_h()) * s.out_w() * s.out_c;
  GradTile t = walk_of(s);
  t.ldw = patch;
  const int chunk = samples_per_chunk(s, t);
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    t.samples = std::min(chunk, s.batch - n0);
    t.accumulate = accumulate || n0 > 0;
    for (int o0 = 0; o0 < s.out_c; o0 += kWideRows)
      for (long q0 = 0; q0 < patch; q0 += 8 * NV) {
        const long kh = q0 / row, r0 = q0 % row;
        t.x = xp + n0 * t.padded_sample + kh * t.padded_row + r0;
        t.dy = dy + n0 * out_sample + o0;
        t.dw = dwt + o0 * patch + q0;
        wide_tile<NV>(t);
      }
  }
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

// dW (patch × out_c), chunk by chunk of samples, tile by tile of window rows and channels.
template <int SEG, int NV>
void run_narrow(const ConvShape& s, const float* xp, const float* dy, float* dw, bool accumulate) {
  constexpr int KR = rows_per_tile<SEG, NV>();
  const long out_sample = static_cast<long>(s.out_h()) * s.out_w() * s.out_c;
  GradTile t = walk_of(s);
  t.ldw = s.out_c;
  const int chunk = samples_per_chunk(s, t);
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    t.samples = std::min(chunk, s.batch - n0);
    t.accumulate = accumulate || n0 > 0;
    for (int j0 = 0; j0 < s.out_c; j0 += 8 * NV)
      for (int kh = 0; kh < s.kernel; kh += KR) {
        t.x = xp + n0 * t.padded_sample + kh * t.padded_row;
        t.dy = dy + n0 * out_sample + j0;
        t.dw = dw + static_cast<long>(kh) * SEG * s.out_c + j0;
        narrow_rows<SEG, KR, NV>(std::min(KR, s.kernel - kh), t);
      }
  }
}

// Calls f(std::integral_constant<int, SEG>) for the window-row length `floats` when it is one
// of SEGS; false when none is.
template <int SEG, int... SEGS, class F>
bool with_segment(int floats, F f) {
  if (floats == SEG) return f(std::integral_constant<int, SEG>{}), true;
  if constexpr (sizeof...(SEGS) > 0) return with_segment<SEGS...>(floats, f);
  return false;
}

// The narrow window rows with a kernel: 1×1 to 7×7 on grey images, 3×3 and 5×5 on RGB.
template <class F>
bool with_narrow_segment(int floats, F f) {
  return with_segment<1, 3, 5, 7, 9, 15>(floats, f);
}

}  // namespace

void direct_conv_weight_gradient_avx2(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate) {
  const int row = s.kernel * s.in_c;  // a multiple of 16: in_c is
  if (row % 24 == 0) return run_wide<3>(s, xp, dy, dwt, accumulate);
  run_wide<2>(s, xp, dy, dwt, accumulate);
}

bool narrow_window_row_avx2(const ConvShape& s) {
  return with_narrow_segment(s.kernel * s.in_c, [](auto) {});
}

void direct_conv_narrow_weight_gradient_avx2(const ConvShape& s, const float* xp, const float* dy, float* dw,
                                              bool accumulate) {
  with_narrow_segment(s.kernel * s.in_c, [&](auto segment) {
    constexpr int SEG = decltype(segment)::value;
    // Two vectors of channels where their accumulators leave room (dy's and a broadcast).
    if (s.out_c % 16 == 0 && 2 * SEG + 3 <= 16) run_narrow<SEG, 2>(s, xp, dy, dw, accumulate);
    else run_narrow<SEG, 1>(s, xp, dy, dw, accumulate);
  });
}

}  // namespace starling::kernels::native
