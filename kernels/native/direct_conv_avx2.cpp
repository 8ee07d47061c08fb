// AVX2 direct convolution (kernels/direct_conv.h), the AVX-512 file's loop for 16 ymm
// registers: a tile of up to 6 output pixels along a row × 16 output channels (12
// accumulators, 2 weight vectors and a broadcast) stays in registers while the window's
// rows are walked as k segments of kernel·in_c contiguous floats; pixel r of the tile reads
// its window r·in_c further on. Compiled with -mavx2 -mfma for this file only.
#include "kernels/native/direct_conv_isa.h"

#include <immintrin.h>

namespace starling::kernels::native {
namespace {

struct Window {
  const float* a = nullptr;  // window of the tile's first pixel, first row
  long pixel = 0;            // floats from one pixel's window to the next (in_c)
  long row = 0;              // floats from one window row to the next (padded row)
  int rows = 0;              // window rows (the kernel)
  int seg = 0;               // floats per window row (kernel·in_c)
  const float* w = nullptr;  // weights of the tile's channels: row p at w + p·ldw
  long ldw = 0;
  float* y = nullptr;  // the tile's first output
  long ldy = 0;        // floats from one output pixel to the next (out_c)
  const float* bias = nullptr;
  bool relu = false;
};

// PIX: the pixel stride (in_c) when known at compile time, so that every broadcast is one
// load at a constant displacement; 0: read from t.
template <int MR, int NV, int PIX>
__attribute__((noinline)) void conv_tile(const Window& args) {
  const Window t = args;  // a private copy: the stores below may alias anything
  const long pixel = PIX ? PIX : t.pixel;
  __m256 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
  const float* b = t.w;
  for (int kh = 0; kh < t.rows; ++kh) {
    const float* a = t.a + kh * t.row;
#pragma GCC unroll 4
    for (int p = 0; p < t.seg; ++p, b += t.ldw) {
      __m256 bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m256 ar = _mm256_broadcast_ss(a + r * pixel + p);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(ar, bv[v], acc[r][v]);
      }
    }
  }
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const __m256 bias = t.bias ? _mm256_loadu_ps(t.bias + 8 * v) : zero;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      __m256 out = _mm256_add_ps(acc[r][v], bias);
      if (t.relu) out = _mm256_max_ps(out, zero);  // NaN to 0, like the reference
      _mm256_storeu_ps(t.y + r * t.ldy + 8 * v, out);
    }
  }
}

// A tile of `mr` ≤ MR pixels: the instantiation for exactly mr rows.
template <int MR, int NV, int PIX>
void tile_rows(int mr, const Window& t) {
  if constexpr (MR > 1) {
    if (mr < MR) return tile_rows<MR - 1, NV, PIX>(mr, t);
  }
  conv_tile<MR, NV, PIX>(t);
}

constexpr int kPixels = 6;  // pixels per tile: 12 accumulators over 2 vectors of channels
constexpr int kVectors = 2;

// Pixels per tile along an output row of `ow`: the row split into the fewest tiles of at
// most kPixels, as even as they go (14 as 5, 5, 4 rather than 6, 6, 2: a short tile's few
// accumulators leave the FMA pipes waiting on each other).
int tile_width(int ow) {
  const int tiles = (ow + kPixels - 1) / kPixels;
  return (ow + tiles - 1) / tiles;
}

template <int PIX>
void run(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  const int oh = s.out_h(), ow = s.out_w(), pw = s.in_w + 2 * s.pad;
  const int step = tile_width(ow);
  Window t;
  t.pixel = s.in_c, t.row = static_cast<long>(pw) * s.in_c, t.rows = s.kernel, t.seg = s.kernel * s.in_c;
  t.ldw = s.out_c, t.ldy = s.out_c, t.relu = relu;
  const long padded_sample = static_cast<long>(s.in_h + 2 * s.pad) * t.row;
  for (int n = 0; n < s.batch; ++n)
    for (int h = 0; h < oh; ++h)
      for (int x0 = 0; x0 < ow; x0 += step) {
        const int mr = ow - x0 < step ? ow - x0 : step;
        t.a = xp + n * padded_sample + h * t.row + static_cast<long>(x0) * s.in_c;
        for (int j0 = 0; j0 < s.out_c; j0 += 8 * kVectors) {
          t.w = w + j0;
          t.y = y + ((static_cast<long>(n) * oh + h) * ow + x0) * s.out_c + j0;
          t.bias = bias ? bias + j0 : nullptr;
          tile_rows<kPixels, kVectors, PIX>(mr, t);
        }
      }
}

// The pixel stride as a constant for resnet8's channel counts.
void with_pixel(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  switch (s.in_c) {
    case 16: return run<16>(s, xp, w, bias, relu, y);
    case 32: return run<32>(s, xp, w, bias, relu, y);
    case 64: return run<64>(s, xp, w, bias, relu, y);
    default: return run<0>(s, xp, w, bias, relu, y);
  }
}

}  // namespace

void direct_conv_avx2(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  with_pixel(s, xp, w, bias, relu, y);
}

}  // namespace starling::kernels::native
