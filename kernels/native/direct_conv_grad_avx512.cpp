// AVX-512 weight gradient of the direct convolution (kernels/direct_conv.h), without im2col:
// dWᵀ[o, q] = Σ over output pixels of dy[pixel, o] · window(pixel)[q], where the window's
// row kh is kernel·in_c contiguous floats of the zero-bordered input. A tile of 8 output
// channels × 16·NV window floats (inside one window row) stays in registers while the
// pixels of a chunk of samples stream by: a GEMM whose B rows are read from the input in
// place, one pixel (in_c floats) apart along an output row. Compiled with -mavx512f/bw/dq/vl
// -mfma for this file only.
#include "kernels/native/direct_conv_isa.h"

#include <immintrin.h>

#include <algorithm>

namespace starling::kernels::native {
namespace {

constexpr int kRows = 8;                 // output channels per tile
constexpr long kChunkBytes = 512 << 10;  // dy and input of a chunk of samples, kept in L2 across its tiles

struct GradTile {
  const float* x = nullptr;  // window row of the chunk's first pixel, at this tile's columns
  const float* dy = nullptr; // the chunk's first pixel, at this tile's output channels
  int samples = 0, out_h = 0, out_w = 0;
  long pixel = 0;          // in_c: from one window to the next along a row
  long padded_row = 0;     // floats of a padded input row
  long padded_sample = 0;  // floats of a padded input sample
  long out_c = 0;          // from one pixel's dy to the next
  float* dwt = nullptr;    // the tile in dWᵀ
  long ldw = 0;            // patch
  bool accumulate = false;
};

template <int NV>
__attribute__((noinline)) void grad_tile(const GradTile& args) {
  const GradTile t = args;  // a private copy: the stores below may alias anything
  __m512 acc[kRows][NV];
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      acc[i][v] = t.accumulate ? _mm512_loadu_ps(t.dwt + i * t.ldw + 16 * v) : _mm512_setzero_ps();
  const float* g = t.dy;
  for (int n = 0; n < t.samples; ++n)
    for (int h = 0; h < t.out_h; ++h) {
      const float* x = t.x + n * t.padded_sample + h * t.padded_row;
#pragma GCC unroll 2
      for (int w = 0; w < t.out_w; ++w, x += t.pixel, g += t.out_c) {
        __m512 bv[NV];
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(x + 16 * v);
#pragma GCC unroll 8
        for (int i = 0; i < kRows; ++i) {
          const __m512 gi = _mm512_set1_ps(g[i]);
#pragma GCC unroll 3
          for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(gi, bv[v], acc[i][v]);
        }
      }
    }
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(t.dwt + i * t.ldw + 16 * v, acc[i][v]);
}

template <int NV>
void run(const ConvShape& s, const float* xp, const float* dy, float* dwt) {
  const int oh = s.out_h(), ow = s.out_w(), row = s.kernel * s.in_c;
  const long patch = s.patch();
  GradTile t;
  t.out_h = oh, t.out_w = ow, t.pixel = s.in_c, t.out_c = s.out_c, t.ldw = patch;
  t.padded_row = static_cast<long>(s.in_w + 2 * s.pad) * s.in_c;
  t.padded_sample = static_cast<long>(s.in_h + 2 * s.pad) * t.padded_row;
  const long out_sample = static_cast<long>(oh) * ow * s.out_c;
  const long bytes = 4 * (out_sample + t.padded_sample);
  const int chunk = static_cast<int>(std::clamp<long>(kChunkBytes / bytes, 1, s.batch));
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    t.samples = std::min(chunk, s.batch - n0);
    t.accumulate = n0 > 0;
    for (int o0 = 0; o0 < s.out_c; o0 += kRows)
      for (long q0 = 0; q0 < patch; q0 += 16 * NV) {
        const long kh = q0 / row, r0 = q0 % row;
        t.x = xp + n0 * t.padded_sample + kh * t.padded_row + r0;
        t.dy = dy + n0 * out_sample + o0;
        t.dwt = dwt + o0 * patch + q0;
        grad_tile<NV>(t);
      }
  }
}

}  // namespace

void direct_conv_weight_gradient_avx512(const ConvShape& s, const float* xp, const float* dy, float* dwt) {
  const int row = s.kernel * s.in_c;  // a multiple of 16: in_c is
  if (row % 48 == 0) return run<3>(s, xp, dy, dwt);
  if (row % 32 == 0) return run<2>(s, xp, dy, dwt);
  run<1>(s, xp, dy, dwt);
}

}  // namespace starling::kernels::native
