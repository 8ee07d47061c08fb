// NEON weight gradient of the direct convolution (kernels/direct_conv.h), without im2col,
// with tiles for AArch64's 32 vector registers (the walk is direct_conv_grad_walk.h's):
// dW[q, o] = Σ over output pixels of window(pixel)[q] · dy[pixel, o]. As in the AVX2 file,
// a tile of the gradient stays in registers while the pixels of a chunk of samples stream by:
// - wide inputs (in_c in 16s): dWᵀ, 4 output channels × 4·NV window floats inside one
//   window row (NV = 6 where rows come in 24s, else 4);
// - narrow inputs (a window row of at most 15 floats): dW, KR window rows × 4·NV output
//   channels, each window float taken by the FMAs as a scalar.
// NEON is part of every AArch64 CPU: no flags.
#include "kernels/native/direct_conv_grad_walk.h"
#include "kernels/native/direct_conv_isa.h"

#include <arm_neon.h>

#include <algorithm>

namespace starling::kernels::native {
namespace {

constexpr int kRegisters = 32;

template <int ROWS, int NV>
__attribute__((always_inline)) inline void load_tile(float32x4_t (&acc)[ROWS][NV], const GradTile& t) {
  for (int i = 0; i < ROWS; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = t.accumulate ? vld1q_f32(t.dw + i * t.ldw + 4 * v) : vdupq_n_f32(0.f);
}

template <int ROWS, int NV>
__attribute__((always_inline)) inline void store_tile(const float32x4_t (&acc)[ROWS][NV], const GradTile& t) {
  for (int i = 0; i < ROWS; ++i)
    for (int v = 0; v < NV; ++v) vst1q_f32(t.dw + i * t.ldw + 4 * v, acc[i][v]);
}

// Wide inputs: 4 output channels (dy's floats) × NV vectors of window floats: 24
// accumulators at NV = 6, with 6 loads and 4 scalars per 24 multiply-adds.
constexpr int kWideRows = 4;

template <int NV>
__attribute__((noinline)) void wide_tile(const GradTile& args) {
  const GradTile t = args;  // a private copy: the stores below may alias anything
  float32x4_t acc[kWideRows][NV];
  load_tile(acc, t);
  for_each_pixel(t, [&](const float* x, const float* g) {
    float32x4_t bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = vld1q_f32(x + 4 * v);
    const float32x4_t gv = vld1q_f32(g);
    for (int v = 0; v < NV; ++v) {
      acc[0][v] = vfmaq_laneq_f32(acc[0][v], bv[v], gv, 0);
      acc[1][v] = vfmaq_laneq_f32(acc[1][v], bv[v], gv, 1);
      acc[2][v] = vfmaq_laneq_f32(acc[2][v], bv[v], gv, 2);
      acc[3][v] = vfmaq_laneq_f32(acc[3][v], bv[v], gv, 3);
    }
  });
  store_tile(acc, t);
}

// Narrow inputs: KR window rows of SEG floats × NV vectors of channels.
template <int SEG, int KR, int NV>
__attribute__((noinline)) void narrow_tile(const GradTile& args) {
  const GradTile t = args;  // a private copy: the stores below may alias anything
  float32x4_t acc[KR * SEG][NV];
  load_tile(acc, t);
  for_each_pixel(t, [&](const float* x, const float* g) {
    float32x4_t gv[NV];
    for (int v = 0; v < NV; ++v) gv[v] = vld1q_f32(g + 4 * v);
    for (int r = 0; r < KR; ++r)
      for (int j = 0; j < SEG; ++j) {
        const float a = x[r * t.padded_row + j];
        for (int v = 0; v < NV; ++v) acc[r * SEG + j][v] = vfmaq_n_f32(acc[r * SEG + j][v], gv[v], a);
      }
  });
  store_tile(acc, t);
}

// Vectors of channels per tile: the most (4, 2 or 1) whose accumulators for one window row
// leave room for dy's vectors and the input float.
template <int SEG>
constexpr int vectors_per_tile() {
  for (int nv : {4, 2})
    if (SEG * nv + nv + 1 <= kRegisters) return nv;
  return 1;
}

// Window rows per tile: as many as leave that room, no more than a kernel of SEG floats a
// row can have.
template <int SEG, int NV>
constexpr int rows_per_tile() {
  return std::min(SEG, std::max(1, (kRegisters - NV - 1) / (SEG * NV)));
}

// A tile of `kr` ≤ KR window rows: the instantiation for exactly kr.
template <int SEG, int KR, int NV>
void narrow_rows(int kr, const GradTile& t) {
  if constexpr (KR > 1) {
    if (kr < KR) return narrow_rows<SEG, KR - 1, NV>(kr, t);
  }
  narrow_tile<SEG, KR, NV>(t);
}

}  // namespace

void direct_conv_weight_gradient_neon(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate) {
  const int row = s.kernel * s.in_c;  // a multiple of 16: in_c is
  if (row % 24 == 0) return run_wide<kWideRows, 4 * 6>(s, xp, dy, dwt, accumulate, wide_tile<6>);
  run_wide<kWideRows, 4 * 4>(s, xp, dy, dwt, accumulate, wide_tile<4>);
}

bool narrow_window_row_neon(const ConvShape& s) {
  return with_narrow_segment(s.kernel * s.in_c, [](auto) {});
}

void direct_conv_narrow_weight_gradient_neon(const ConvShape& s, const float* xp, const float* dy, float* dw,
                                              bool accumulate) {
  with_narrow_segment(s.kernel * s.in_c, [&](auto segment) {
    constexpr int SEG = decltype(segment)::value;
    constexpr int NV = vectors_per_tile<SEG>();
    constexpr int KR = rows_per_tile<SEG, NV>();
    run_narrow<SEG, KR, 4 * NV>(s, xp, dy, dw, accumulate, narrow_rows<SEG, KR, NV>);
  });
}

}  // namespace starling::kernels::native
