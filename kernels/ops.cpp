#include "kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace starling::kernels {

void im2col(const ConvShape& s, const float* x, float* cols) {
  const int oh = s.out_h(), ow = s.out_w();
  const long patch = s.patch();
  const size_t run = static_cast<size_t>(s.in_c) * sizeof(float);
  float* out = cols;
  for (int n = 0; n < s.batch; ++n) {
    const float* xn = x + static_cast<long>(n) * s.in_h * s.in_w * s.in_c;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox, out += patch) {
        float* dst = out;
        for (int ky = 0; ky < s.kernel; ++ky) {
          const int iy = oy * s.stride - s.pad + ky;
          for (int kx = 0; kx < s.kernel; ++kx, dst += s.in_c) {
            const int ix = ox * s.stride - s.pad + kx;
            if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) std::memset(dst, 0, run);
            else std::memcpy(dst, xn + (static_cast<long>(iy) * s.in_w + ix) * s.in_c, run);
          }
        }
      }
  }
}

void col2im(const ConvShape& s, const float* dcols, float* dx) {
  const int oh = s.out_h(), ow = s.out_w();
  std::fill(dx, dx + static_cast<long>(s.batch) * s.in_h * s.in_w * s.in_c, 0.f);
  const float* src = dcols;
  for (int n = 0; n < s.batch; ++n) {
    float* dxn = dx + static_cast<long>(n) * s.in_h * s.in_w * s.in_c;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ky = 0; ky < s.kernel; ++ky) {
          const int iy = oy * s.stride - s.pad + ky;
          for (int kx = 0; kx < s.kernel; ++kx, src += s.in_c) {
            const int ix = ox * s.stride - s.pad + kx;
            if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) continue;
            float* d = dxn + (static_cast<long>(iy) * s.in_w + ix) * s.in_c;
            for (int c = 0; c < s.in_c; ++c) d[c] += src[c];
          }
        }
  }
}

void maxpool_forward(const PoolShape& s, const float* x, float* y, int32_t* argmax) {
  const int oh = s.out_h(), ow = s.out_w(), C = s.channels;
  const long in_sample = static_cast<long>(s.in_h) * s.in_w * C;
  for (int n = 0; n < s.batch; ++n) {
    const float* xn = x + n * in_sample;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const long o = ((static_cast<long>(n) * oh + oy) * ow + ox) * C;
        for (int c = 0; c < C; ++c) {
          y[o + c] = -std::numeric_limits<float>::infinity();
          argmax[o + c] = 0;
        }
        for (int ky = 0; ky < s.size; ++ky)
          for (int kx = 0; kx < s.size; ++kx) {
            const int32_t off = ((oy * s.stride + ky) * s.in_w + (ox * s.stride + kx)) * C;
            for (int c = 0; c < C; ++c)
              if (xn[off + c] > y[o + c]) {
                y[o + c] = xn[off + c];
                argmax[o + c] = off + c;
              }
          }
      }
  }
}

void maxpool_backward(const PoolShape& s, const float* dy, const int32_t* argmax, float* dx) {
  const long in_sample = static_cast<long>(s.in_h) * s.in_w * s.channels;
  const long out_sample = static_cast<long>(s.out_h()) * s.out_w() * s.channels;
  std::fill(dx, dx + s.batch * in_sample, 0.f);
  for (int n = 0; n < s.batch; ++n)
    for (long i = 0; i < out_sample; ++i) dx[n * in_sample + argmax[n * out_sample + i]] += dy[n * out_sample + i];
}

void relu_forward(long n, const float* x, float* y) {
  for (long i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

void relu_backward(long n, const float* y, const float* dy, float* dx) {
  for (long i = 0; i < n; ++i) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

void column_sums(int rows, int cols, const float* dy, float* db, bool accumulate) {
  if (!accumulate) std::fill(db, db + cols, 0.f);
  for (int i = 0; i < rows; ++i) {
    const float* row = dy + static_cast<long>(i) * cols;
    for (int j = 0; j < cols; ++j) db[j] += row[j];
  }
}

double softmax_xent(int batch, int classes, const float* logits, const int32_t* labels, float* dlogits) {
  double total = 0.0;
  const float inv_batch = 1.f / static_cast<float>(batch);
  for (int i = 0; i < batch; ++i) {
    const float* z = logits + static_cast<long>(i) * classes;
    const int label = labels[i] >= 0 && labels[i] < classes ? labels[i] : 0;
    const float zmax = *std::max_element(z, z + classes);
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) sum += std::exp(static_cast<double>(z[j] - zmax));
    const double log_sum = std::log(sum);
    total += log_sum - (z[label] - zmax);
    if (dlogits) {
      float* d = dlogits + static_cast<long>(i) * classes;
      for (int j = 0; j < classes; ++j)
        d[j] = static_cast<float>(std::exp(z[j] - zmax - log_sum)) * inv_batch;
      d[label] -= inv_batch;
    }
  }
  return total / batch;
}

void argmax_rows(int rows, int cols, const float* x, int32_t* out) {
  for (int i = 0; i < rows; ++i) {
    const float* row = x + static_cast<long>(i) * cols;
    out[i] = static_cast<int32_t>(std::max_element(row, row + cols) - row);
  }
}

}  // namespace starling::kernels
