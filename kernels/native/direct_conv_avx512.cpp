// AVX-512 direct convolution (kernels/direct_conv.h): a tile of MR output pixels along a
// row × 16·NV output channels stays in registers while the window's rows are walked as k
// segments of kernel·in_c contiguous floats; pixel r of the tile reads its window r·in_c
// further on. Compiled with -mavx512f/bw/dq/vl -mfma for this file only.
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
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* b = t.w;
  for (int kh = 0; kh < t.rows; ++kh) {
    const float* a = t.a + kh * t.row;
#pragma GCC unroll 4
    for (int p = 0; p < t.seg; ++p, b += t.ldw) {
      __m512 bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 ar = _mm512_set1_ps(a[r * pixel + p]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]);
      }
    }
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const __m512 bias = t.bias ? _mm512_loadu_ps(t.bias + 16 * v) : zero;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      __m512 out = _mm512_add_ps(acc[r][v], bias);
      if (t.relu) out = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(out, zero, _CMP_GT_OQ), out);
      _mm512_storeu_ps(t.y + r * t.ldy + 16 * v, out);
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

// Pixels per tile for NV vectors of channels: 14–28 accumulators, and a load per pixel and
// per vector of weights for each MR·NV multiply-adds. 14 and 7 split rows of 28, 14 and 7
// pixels (resnet8's stages) without a short last tile, whose few accumulators would leave
// the FMA pipes waiting on each other.
template <int NV>
constexpr int rows_for() {
  return NV == 4 ? 7 : 14;
}

// Pixels per tile along an output row of `ow`: the most, up to MR, that split the row into
// equal tiles, unless those hold fewer than half of MR's accumulators (a row of 8 under 64
// channels: two tiles of 4, not 7 and a lone pixel).
template <int MR>
int tile_width(int ow) {
  for (int m = MR; 2 * m >= MR; --m)
    if (ow % m == 0) return m;
  return MR;
}

template <int NV, int PIX>
void run(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  constexpr int MR = rows_for<NV>();
  const int oh = s.out_h(), ow = s.out_w(), pw = s.in_w + 2 * s.pad;
  const int step = tile_width<MR>(ow);
  Window t;
  t.pixel = s.in_c, t.row = static_cast<long>(pw) * s.in_c, t.rows = s.kernel, t.seg = s.kernel * s.in_c;
  t.ldw = s.out_c, t.ldy = s.out_c, t.relu = relu;
  const long padded_sample = static_cast<long>(s.in_h + 2 * s.pad) * t.row;
  for (int n = 0; n < s.batch; ++n)
    for (int h = 0; h < oh; ++h)
      for (int x0 = 0; x0 < ow; x0 += step) {
        const int mr = ow - x0 < step ? ow - x0 : step;
        t.a = xp + n * padded_sample + h * t.row + static_cast<long>(x0) * s.in_c;
        for (int j0 = 0; j0 < s.out_c; j0 += 16 * NV) {
          t.w = w + j0;
          t.y = y + ((static_cast<long>(n) * oh + h) * ow + x0) * s.out_c + j0;
          t.bias = bias ? bias + j0 : nullptr;
          tile_rows<MR, NV, PIX>(mr, t);
        }
      }
}

}  // namespace

namespace {

template <int NV>
void with_pixel(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  switch (s.in_c) {
    case 16: return run<NV, 16>(s, xp, w, bias, relu, y);
    case 32: return run<NV, 32>(s, xp, w, bias, relu, y);
    case 64: return run<NV, 64>(s, xp, w, bias, relu, y);
    default: return run<NV, 0>(s, xp, w, bias, relu, y);
  }
}

}  // namespace

void direct_conv_avx512(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  if (s.out_c % 64 == 0) return with_pixel<4>(s, xp, w, bias, relu, y);
  if (s.out_c % 32 == 0) return with_pixel<2>(s, xp, w, bias, relu, y);
  with_pixel<1>(s, xp, w, bias, relu, y);
}

}  // namespace starling::kernels::native
