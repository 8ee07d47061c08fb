#pragma once
// The ISA-neutral part of the direct convolution's weight gradient (kernels/direct_conv.h):
// the chunks of samples, the walk over output pixels, and the order in which a per-ISA file's
// register tiles cover dWᵀ (wide inputs) or dW (narrow ones). Each ISA file brings its tiles.
//
// Internal linkage on purpose, as in native/driver.h: compiled into each ISA file with that
// file's flags, and never merged by the linker across them.
#include "kernels/ops.h"

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

// dWᵀ (out_c × patch), chunk by chunk of samples, in tiles of ROWS output channels × FLOATS
// window floats inside one window row (the row's length a multiple of FLOATS): tile(t).
template <int ROWS, int FLOATS, class Tile>
void run_wide(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate, Tile tile) {
  const int row = s.kernel * s.in_c;
  const long patch = s.patch(), out_sample = static_cast<long>(s.out_h()) * s.out_w() * s.out_c;
  GradTile t = walk_of(s);
  t.ldw = patch;
  const int chunk = samples_per_chunk(s, t);
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    t.samples = std::min(chunk, s.batch - n0);
    t.accumulate = accumulate || n0 > 0;
    for (int o0 = 0; o0 < s.out_c; o0 += ROWS)
      for (long q0 = 0; q0 < patch; q0 += FLOATS) {
        const long kh = q0 / row, r0 = q0 % row;
        t.x = xp + n0 * t.padded_sample + kh * t.padded_row + r0;
        t.dy = dy + n0 * out_sample + o0;
        t.dw = dwt + o0 * patch + q0;
        tile(t);
      }
  }
}

// dW (patch × out_c), chunk by chunk of samples, in tiles of up to KR window rows of SEG
// floats × CHANNELS output channels: rows(kr, t) for a tile of kr ≤ KR window rows.
template <int SEG, int KR, int CHANNELS, class Rows>
void run_narrow(const ConvShape& s, const float* xp, const float* dy, float* dw, bool accumulate, Rows rows) {
  const long out_sample = static_cast<long>(s.out_h()) * s.out_w() * s.out_c;
  GradTile t = walk_of(s);
  t.ldw = s.out_c;
  const int chunk = samples_per_chunk(s, t);
  for (int n0 = 0; n0 < s.batch; n0 += chunk) {
    t.samples = std::min(chunk, s.batch - n0);
    t.accumulate = accumulate || n0 > 0;
    for (int j0 = 0; j0 < s.out_c; j0 += CHANNELS)
      for (int kh = 0; kh < s.kernel; kh += KR) {
        t.x = xp + n0 * t.padded_sample + kh * t.padded_row;
        t.dy = dy + n0 * out_sample + j0;
        t.dw = dw + static_cast<long>(kh) * SEG * s.out_c + j0;
        rows(std::min(KR, s.kernel - kh), t);
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
}  // namespace starling::kernels::native
