// NEON direct convolution (kernels/direct_conv.h), the AVX2 file's loop for AArch64's 32
// vector registers: a tile of up to 6 output pixels along a row × 16 output channels (24
// accumulators, 4 weight vectors and the input float the FMAs take) stays in registers
// while the window's rows are walked as k segments of kernel·in_c contiguous floats; pixel
// r of the tile reads its window r·in_c further on. NEON is part of every AArch64 CPU: no
// flags; entered through platform::IsaDispatch at the neon level.
#include "kernels/native/direct_conv_isa.h"

#include <arm_neon.h>

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

constexpr int kPixels = 6;   // pixels per tile
constexpr int kVectors = 4;  // vectors of 4 output channels per tile

// PIX: the pixel stride (in_c) when known at compile time; 0: read from t.
template <int MR, int PIX>
__attribute__((noinline)) void conv_tile(const Window& args) {
  const Window t = args;  // a private copy: the stores below may alias anything
  const long pixel = PIX ? PIX : t.pixel;
  float32x4_t acc[MR][kVectors];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < kVectors; ++v) acc[r][v] = vdupq_n_f32(0.f);
  const float* b = t.w;
  for (int kh = 0; kh < t.rows; ++kh) {
    const float* a = t.a + kh * t.row;
    for (int p = 0; p < t.seg; ++p, b += t.ldw) {
      float32x4_t bv[kVectors];
      for (int v = 0; v < kVectors; ++v) bv[v] = vld1q_f32(b + 4 * v);
      for (int r = 0; r < MR; ++r) {
        const float ar = a[r * pixel + p];
        for (int v = 0; v < kVectors; ++v) acc[r][v] = vfmaq_n_f32(acc[r][v], bv[v], ar);
      }
    }
  }
  const float32x4_t zero = vdupq_n_f32(0.f);
  for (int v = 0; v < kVectors; ++v) {
    const float32x4_t bias = t.bias ? vld1q_f32(t.bias + 4 * v) : zero;
    for (int r = 0; r < MR; ++r) {
      float32x4_t out = vaddq_f32(acc[r][v], bias);
      if (t.relu) out = vmaxnmq_f32(out, zero);  // NaN to 0, like the reference
      vst1q_f32(t.y + r * t.ldy + 4 * v, out);
    }
  }
}

// A tile of `mr` ≤ MR pixels: the instantiation for exactly mr rows.
template <int MR, int PIX>
void tile_rows(int mr, const Window& t) {
  if constexpr (MR > 1) {
    if (mr < MR) return tile_rows<MR - 1, PIX>(mr, t);
  }
  conv_tile<MR, PIX>(t);
}

// Pixels per tile along an output row of `ow`: the fewest tiles of at most kPixels, as even
// as they go, as in the AVX2 file.
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
        for (int j0 = 0; j0 < s.out_c; j0 += 4 * kVectors) {
          t.w = w + j0;
          t.y = y + ((static_cast<long>(n) * oh + h) * ow + x0) * s.out_c + j0;
          t.bias = bias ? bias + j0 : nullptr;
          tile_rows<kPixels, PIX>(mr, t);
        }
      }
}

}  // namespace

void direct_conv_neon(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  switch (s.in_c) {  // the pixel stride as a constant for resnet8's channel counts
    case 16: return run<16>(s, xp, w, bias, relu, y);
    case 32: return run<32>(s, xp, w, bias, relu, y);
    case 64: return run<64>(s, xp, w, bias, relu, y);
    default: return run<0>(s, xp, w, bias, relu, y);
  }
}

}  // namespace starling::kernels::native
