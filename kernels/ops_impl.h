#pragma once
// Bodies of the non-GEMM kernels (im2col, col2im, max pooling, ReLU, column sums, the SGD
// step and the SMA loops; group normalisation in norm_impl.h), written once as plain loops
// the compiler vectorizes and compiled into each ISA file with that file's flags. `Runs`
// supplies the short contiguous copies that im2col is made of (a 5-float window row when
// in_c = 1): a loop GCC would turn into a memcpy call per row. Runs::copy
// takes any length; Runs::Fixed(n).copy moves n floats with its masks set up once.
// Runs::kSelectPoolGradient: max-pool gradients as a select per input element (measured
// faster with AVX2/AVX-512) rather than a zero fill and scatter (faster with SSE2 only).
// Runs::transpose: blocked_transpose, or a transpose in registers.
//
// Internal linkage on purpose, as in native/driver.h: the AVX-512 and baseline builds of
// these templates must never be merged by the linker.
#include "kernels/ops.h"
#include "kernels/ops_isa.h"
#include "kernels/norm_impl.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace starling::kernels::ops_detail {
namespace {

// Runs::Fixed for instruction sets with nothing to set up per length.
template <class Runs>
class PlainFixed {
 public:
  explicit PlainFixed(long n) : n_(n) {}
  void copy(float* d, const float* s) const { Runs::copy(d, s, n_); }

 private:
  long n_;
};

inline void zero_run(float* __restrict d, long n) {
  for (long i = 0; i < n; ++i) d[i] = 0.f;
}

inline void add_run(float* __restrict d, const float* __restrict s, long n) {
  for (long i = 0; i < n; ++i) d[i] += s[i];
}

// Window columns [kx0, kx1) of output column ox lie inside the image; the rest is padding.
struct Span {
  int kx0, kx1;
};

inline Span valid_columns(const ConvShape& s, int ox) {
  const int ix0 = ox * s.stride - s.pad;
  return {std::max(0, -ix0), std::min(s.kernel, s.in_w - ix0)};
}

// One patch row: for each window row, the in-image part of the window is one contiguous run
// of (kx1 - kx0) * in_c floats in NHWC, so it is copied as one piece.
template <class Runs>
void im2col_row(const ConvShape& s, const float* xn, int oy, int ox, float* dst) {
  const long run = static_cast<long>(s.kernel) * s.in_c;
  const Span sp = valid_columns(s, ox);
  const int ix0 = ox * s.stride - s.pad;
  for (int ky = 0; ky < s.kernel; ++ky, dst += run) {
    const int iy = oy * s.stride - s.pad + ky;
    if (iy < 0 || iy >= s.in_h || sp.kx1 <= sp.kx0) {
      zero_run(dst, run);
      continue;
    }
    const long head = static_cast<long>(sp.kx0) * s.in_c, body = static_cast<long>(sp.kx1 - sp.kx0) * s.in_c;
    zero_run(dst, head);
    Runs::copy(dst + head, xn + (static_cast<long>(iy) * s.in_w + ix0 + sp.kx0) * s.in_c, body);
    zero_run(dst + head + body, run - head - body);
  }
}

// A patch row whose window lies wholly inside the image: `kernel` runs of the same length,
// one input row apart, copied with a move set up once per call (no bounds, no memsets).
template <class Runs>
void im2col_interior(const ConvShape& s, const float* window, const typename Runs::Fixed& run, float* dst) {
  const long len = static_cast<long>(s.kernel) * s.in_c, row = static_cast<long>(s.in_w) * s.in_c;
  for (int ky = 0; ky < s.kernel; ++ky) run.copy(dst + ky * len, window + ky * row);
}

template <class Runs>
void im2col(const ConvShape& s, const float* x, float* cols) {
  const int oh = s.out_h(), ow = s.out_w();
  const long patch = s.patch(), in_sample = static_cast<long>(s.in_h) * s.in_w * s.in_c;
  const typename Runs::Fixed run(static_cast<long>(s.kernel) * s.in_c);
  float* out = cols;
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < oh; ++oy) {
      const int iy0 = oy * s.stride - s.pad;
      const bool rows_inside = iy0 >= 0 && iy0 + s.kernel <= s.in_h;
      for (int ox = 0; ox < ow; ++ox, out += patch) {
        const int ix0 = ox * s.stride - s.pad;
        if (rows_inside && ix0 >= 0 && ix0 + s.kernel <= s.in_w)
          im2col_interior<Runs>(s, x + n * in_sample + (static_cast<long>(iy0) * s.in_w + ix0) * s.in_c, run, out);
        else
          im2col_row<Runs>(s, x + n * in_sample, oy, ox, out);
      }
    }
}

// Adds one patch row back into the image; the inverse walk of im2col_row.
inline void col2im_row(const ConvShape& s, const float* src, int oy, int ox, float* dxn) {
  const long run = static_cast<long>(s.kernel) * s.in_c;
  const Span sp = valid_columns(s, ox);
  const int ix0 = ox * s.stride - s.pad;
  if (sp.kx1 <= sp.kx0) return;
  for (int ky = 0; ky < s.kernel; ++ky, src += run) {
    const int iy = oy * s.stride - s.pad + ky;
    if (iy < 0 || iy >= s.in_h) continue;
    add_run(dxn + (static_cast<long>(iy) * s.in_w + ix0 + sp.kx0) * s.in_c, src + static_cast<long>(sp.kx0) * s.in_c,
            static_cast<long>(sp.kx1 - sp.kx0) * s.in_c);
  }
}

inline void col2im(const ConvShape& s, const float* dcols, float* dx) {
  const int oh = s.out_h(), ow = s.out_w();
  const long patch = s.patch(), in_sample = static_cast<long>(s.in_h) * s.in_w * s.in_c;
  zero_run(dx, s.batch * in_sample);
  const float* src = dcols;
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox, src += patch) col2im_row(s, src, oy, ox, dx + n * in_sample);
}

// Offsets of a window's elements from its first, in window order (row by row): the same
// for every window, so taken once per call. SIZE: the window's side when known at compile
// time (0: s.size), so that the window loops below unroll inside the vectorized channel loop;
// then the offsets live on the stack, since a fused pool calls this once per chunk of samples.
template <int SIZE>
auto window_offsets(const PoolShape& s) {
  std::conditional_t<SIZE == 0, std::vector<int32_t>, std::array<int32_t, SIZE * SIZE>> rel{};
  const int size = SIZE ? SIZE : s.size;
  if constexpr (SIZE == 0) rel.resize(static_cast<std::size_t>(size) * size);
  for (int ky = 0; ky < size; ++ky)
    for (int kx = 0; kx < size; ++kx) rel[static_cast<std::size_t>(ky * size + kx)] = (ky * s.in_w + kx) * s.channels;
  return rel;
}

// Where output pixel (oy, ox)'s window starts within its sample.
inline int32_t window_start(const PoolShape& s, int oy, int ox) {
  return ((oy * s.stride) * s.in_w + ox * s.stride) * s.channels;
}

// One output pixel, channels innermost: each channel's best value and its offset stay in
// registers across the window, then are stored once. The first window element is the
// start, so no -inf fill is needed; ties keep the earlier element.
template <int SIZE>
void pool_pixel(const PoolShape& s, const float* __restrict xn, int32_t first, const int32_t* __restrict rel,
                float* __restrict y, int32_t* __restrict am) {
  const int window = SIZE ? SIZE * SIZE : s.size * s.size;
  const float* __restrict w = xn + first;
  for (int c = 0; c < s.channels; ++c) {
    float best = w[c];
    int32_t at = c;
    for (int k = 1; k < window; ++k) {
      const float v = w[rel[k] + c];
      const bool gt = v > best;
      best = gt ? v : best;
      at = gt ? rel[k] + c : at;
    }
    y[c] = best;
    am[c] = first + at;
  }
}

template <int SIZE>
void maxpool_forward_of(const PoolShape& s, const float* x, float* y, int32_t* argmax) {
  const int oh = s.out_h(), ow = s.out_w(), C = s.channels;
  const long in_sample = static_cast<long>(s.in_h) * s.in_w * C;
  const auto rel = window_offsets<SIZE>(s);
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const long o = ((static_cast<long>(n) * oh + oy) * ow + ox) * C;
        pool_pixel<SIZE>(s, x + n * in_sample, window_start(s, oy, ox), rel.data(), y + o, argmax + o);
      }
}

// Calls f(std::integral_constant<int, SIZE>) with the window's side where it is one of the
// common ones, else with 0 (the side read from s).
template <class F>
void with_window(const PoolShape& s, F f) {
  if (s.size == 2) return f(std::integral_constant<int, 2>{});
  if (s.size == 3) return f(std::integral_constant<int, 3>{});
  f(std::integral_constant<int, 0>{});
}

inline void maxpool_forward(const PoolShape& s, const float* x, float* y, int32_t* argmax) {
  with_window(s, [&](auto size) { maxpool_forward_of<size>(s, x, y, argmax); });
}

// Non-overlapping windows (stride == size): every input element belongs to at most one
// window, so dx is written once, as a select, instead of zero-filled and scattered into.
// Each channel's argmax and dy are read once for its whole window.
template <int SIZE>
void pool_back_pixel(const PoolShape& s, const float* __restrict dy, const int32_t* __restrict am, int32_t first,
                     const int32_t* __restrict rel, float* __restrict dxn) {
  const int window = SIZE ? SIZE * SIZE : s.size * s.size;
  float* __restrict d = dxn + first;
  for (int c = 0; c < s.channels; ++c) {
    const int32_t at = am[c] - first;
    const float g = dy[c];
    for (int k = 0; k < window; ++k) d[rel[k] + c] = at == rel[k] + c ? g : 0.f;
  }
}

template <class Runs, int SIZE>
void maxpool_backward_of(const PoolShape& s, const float* dy, const int32_t* argmax, float* dx) {
  const int oh = s.out_h(), ow = s.out_w(), C = s.channels;
  const long in_sample = static_cast<long>(s.in_h) * s.in_w * C;
  const long out_sample = static_cast<long>(oh) * ow * C;
  const bool tiled = Runs::kSelectPoolGradient && s.stride == s.size;
  // Rows and columns past the last window (odd sizes) and overlapping windows need the fill.
  if (!tiled || oh * s.size != s.in_h || ow * s.size != s.in_w) zero_run(dx, s.batch * in_sample);
  const auto rel = window_offsets<SIZE>(s);
  for (int n = 0; n < s.batch; ++n) {
    float* dxn = dx + n * in_sample;
    if (tiled) {
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          const long o = n * out_sample + (static_cast<long>(oy) * ow + ox) * C;
          pool_back_pixel<SIZE>(s, dy + o, argmax + o, window_start(s, oy, ox), rel.data(), dxn);
        }
    } else {
      for (long i = 0; i < out_sample; ++i) dxn[argmax[n * out_sample + i]] += dy[n * out_sample + i];
    }
  }
}

template <class Runs>
void maxpool_backward(const PoolShape& s, const float* dy, const int32_t* argmax, float* dx) {
  with_window(s, [&](auto size) { maxpool_backward_of<Runs, size>(s, dy, argmax, dx); });
}

// No __restrict on the ReLUs: callers may run them in place.
inline void relu_forward(long n, const float* x, float* y) {
  for (long i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

inline void relu_backward(long n, const float* y, const float* dy, float* dx) {
  for (long i = 0; i < n; ++i) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

// Four rows per pass over db: a quarter of the loads and stores of db, which otherwise
// bound the loop when cols is a vector or two wide (conv biases: rows = batch × pixels).
inline void column_sums(int rows, int cols, const float* dy, float* db, bool accumulate) {
  if (!accumulate) zero_run(db, cols);
  int i = 0;
  for (; i + 4 <= rows; i += 4) {
    const float* __restrict r0 = dy + static_cast<long>(i) * cols;
    const float* __restrict r1 = r0 + cols;
    const float* __restrict r2 = r1 + cols;
    const float* __restrict r3 = r2 + cols;
    float* __restrict d = db;
    for (int j = 0; j < cols; ++j) d[j] += (r0[j] + r1[j]) + (r2[j] + r3[j]);
  }
  for (; i < rows; ++i) add_run(db, dy + static_cast<long>(i) * cols, cols);
}

// 16×16 blocks, each written column by column of `at`: its lines stay in L1 while a
// block's reads stride down `a`.
inline void blocked_transpose(int rows, int cols, const float* __restrict a, float* __restrict at) {
  constexpr int kBlock = 16;
  for (int j0 = 0; j0 < cols; j0 += kBlock)
    for (int i0 = 0; i0 < rows; i0 += kBlock) {
      const int i1 = std::min(rows, i0 + kBlock), j1 = std::min(cols, j0 + kBlock);
      for (int j = j0; j < j1; ++j)
        for (int i = i0; i < i1; ++i) at[static_cast<long>(j) * rows + i] = a[static_cast<long>(i) * cols + j];
    }
}

inline void sgd_step(long n, float* __restrict w, const float* __restrict g, float* __restrict v, const SgdArgs& a) {
  const float lr = a.lr, mu = a.momentum, wd = a.weight_decay;
  // The same association as the GEMM's SGD epilogue (gemm_avx512.cpp), so that the fused
  // and the separate step give the same bits.
  if (a.nesterov) {
    for (long i = 0; i < n; ++i) {
      const float gi = g[i] + wd * w[i];
      v[i] = mu * v[i] + gi;
      w[i] -= lr * (gi + mu * v[i]);
    }
  } else {
    for (long i = 0; i < n; ++i) {
      const float gi = g[i] + wd * w[i];
      v[i] = mu * v[i] + gi;
      w[i] -= lr * v[i];
    }
  }
}

inline void sma_correct(long n, const float* __restrict z, float* __restrict w, float* __restrict sum, float alpha,
                        bool accumulate) {
  if (accumulate) {
    for (long i = 0; i < n; ++i) {
      const float c = alpha * (w[i] - z[i]);
      w[i] -= c;
      sum[i] += c;
    }
  } else {
    for (long i = 0; i < n; ++i) {
      const float c = alpha * (w[i] - z[i]);
      w[i] -= c;
      sum[i] = c;
    }
  }
}

inline void sma_center(long n, float* __restrict z, float* __restrict z_prev, const float* __restrict sum,
                       float momentum) {
  if (!z_prev) {
    for (long i = 0; i < n; ++i) z[i] += sum[i];
    return;
  }
  for (long i = 0; i < n; ++i) {
    const float old = z[i];
    z[i] += momentum * (old - z_prev[i]) + sum[i];
    z_prev[i] = old;
  }
}

template <class Runs>
constexpr OpsTable make_table() {
  OpsTable t;
  t.im2col = &im2col<Runs>;
  t.col2im = &col2im;
  t.maxpool_forward = &maxpool_forward;
  t.maxpool_backward = &maxpool_backward<Runs>;
  t.relu_forward = &relu_forward;
  t.relu_backward = &relu_backward;
  t.column_sums = &column_sums;
  t.groupnorm_forward = &groupnorm_forward;
  t.groupnorm_backward = &groupnorm_backward;
  t.sgd_step = &sgd_step;
  t.transpose = &Runs::transpose;
  t.sma_correct = &sma_correct;
  t.sma_center = &sma_center;
  return t;
}

}  // namespace
}  // namespace starling::kernels::ops_detail
