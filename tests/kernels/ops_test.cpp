// Non-GEMM kernel tests: im2col, col2im, max pooling forward/backward, ReLU forward/backward,
// column sums, the transpose, the SGD step and the SMA loops on every ISA path this CPU
// supports (forced with force_isa), against the simplest possible reference loops, over
// ragged shapes (odd channel counts, padding, strides, windows that do not tile the input).
// Outputs start poisoned with NaN so an element a kernel forgets to write fails the exact
// comparison.
#define BOOST_TEST_MODULE kernels_ops
#include <boost/test/unit_test.hpp>

#include "platform/cpu_features.h"
#include "kernels/ops.h"
#include "tests/isa_paths.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using starling::testing::supported_isas;

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Bitwise equality: every op here is exact (copies, selects, sums in the reference's order).
void expect_same(const std::vector<float>& got, const std::vector<float>& want, const std::string& who) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      ++bad;
      BOOST_ERROR(who << " [" << i << "] = " << got[i] << ", want " << want[i]);
    }
}

std::string describe(const sk::ConvShape& s) {
  std::ostringstream o;
  o << "conv b" << s.batch << " " << s.in_h << "x" << s.in_w << "x" << s.in_c << " k" << s.kernel << " s"
    << s.stride << " p" << s.pad;
  return o.str();
}

std::string describe(const sk::PoolShape& s) {
  std::ostringstream o;
  o << "pool b" << s.batch << " " << s.in_h << "x" << s.in_w << "x" << s.channels << " size" << s.size << " s"
    << s.stride;
  return o.str();
}

// Element (n, iy, ix, c) of x, or 0 in the padding.
float at(const sk::ConvShape& s, const std::vector<float>& x, int n, int iy, int ix, int c) {
  if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) return 0.f;
  return x[((static_cast<std::size_t>(n) * s.in_h + iy) * s.in_w + ix) * s.in_c + c];
}

std::vector<float> ref_im2col(const sk::ConvShape& s, const std::vector<float>& x) {
  std::vector<float> cols;
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < s.out_h(); ++oy)
      for (int ox = 0; ox < s.out_w(); ++ox)
        for (int ky = 0; ky < s.kernel; ++ky)
          for (int kx = 0; kx < s.kernel; ++kx)
            for (int c = 0; c < s.in_c; ++c)
              cols.push_back(at(s, x, n, oy * s.stride - s.pad + ky, ox * s.stride - s.pad + kx, c));
  return cols;
}

// Scatters in the same order as the kernel (patch rows in order), so sums match exactly.
std::vector<float> ref_col2im(const sk::ConvShape& s, const std::vector<float>& dcols) {
  std::vector<float> dx(static_cast<std::size_t>(s.batch) * s.in_h * s.in_w * s.in_c, 0.f);
  std::size_t q = 0;
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < s.out_h(); ++oy)
      for (int ox = 0; ox < s.out_w(); ++ox)
        for (int ky = 0; ky < s.kernel; ++ky)
          for (int kx = 0; kx < s.kernel; ++kx)
            for (int c = 0; c < s.in_c; ++c, ++q) {
              const int iy = oy * s.stride - s.pad + ky, ix = ox * s.stride - s.pad + kx;
              if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) continue;
              dx[((static_cast<std::size_t>(n) * s.in_h + iy) * s.in_w + ix) * s.in_c + c] += dcols[q];
            }
  return dx;
}

void check_conv(const sk::ConvShape& s, std::mt19937& rng) {
  const std::vector<float> x = random_vector(static_cast<std::size_t>(s.batch) * s.in_h * s.in_w * s.in_c, rng);
  const std::vector<float> dcols = random_vector(static_cast<std::size_t>(s.rows() * s.patch()), rng);
  const std::vector<float> want_cols = ref_im2col(s, x), want_dx = ref_col2im(s, dcols);
  for (sp::Isa isa : supported_isas()) {
    sp::force_isa(isa);
    const std::string who = std::string(sp::isa_name(isa)) + " " + describe(s);
    std::vector<float> cols(want_cols.size(), kNaN), dx(want_dx.size(), kNaN);
    sk::im2col(s, x.data(), cols.data());
    expect_same(cols, want_cols, who + " im2col");
    sk::col2im(s, dcols.data(), dx.data());
    expect_same(dx, want_dx, who + " col2im");
  }
  sp::force_isa(sp::detected_isa());
}

struct PoolRef {
  std::vector<float> y;
  std::vector<int32_t> argmax;
  std::vector<float> dx;
};

// Strictly-greater scan in window order: ties keep the first element, like the kernel.
PoolRef ref_pool(const sk::PoolShape& s, const std::vector<float>& x, const std::vector<float>& dy) {
  PoolRef r;
  const std::size_t in_sample = static_cast<std::size_t>(s.in_h) * s.in_w * s.channels;
  r.dx.assign(s.batch * in_sample, 0.f);
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < s.out_h(); ++oy)
      for (int ox = 0; ox < s.out_w(); ++ox)
        for (int c = 0; c < s.channels; ++c) {
          float best = -std::numeric_limits<float>::infinity();
          int32_t where = 0;
          for (int ky = 0; ky < s.size; ++ky)
            for (int kx = 0; kx < s.size; ++kx) {
              const int32_t off = ((oy * s.stride + ky) * s.in_w + ox * s.stride + kx) * s.channels + c;
              if (x[n * in_sample + off] > best) best = x[n * in_sample + off], where = off;
            }
          r.dx[n * in_sample + where] += dy[r.y.size()];
          r.y.push_back(best);
          r.argmax.push_back(where);
        }
  return r;
}

void check_pool(const sk::PoolShape& s, std::mt19937& rng, bool ties) {
  const std::size_t in_n = static_cast<std::size_t>(s.batch) * s.in_h * s.in_w * s.channels;
  const std::size_t out_n = static_cast<std::size_t>(s.batch) * s.out_h() * s.out_w() * s.channels;
  std::vector<float> x = random_vector(in_n, rng);
  // Few distinct values (post-ReLU zeros) make ties, which must resolve like the reference.
  if (ties)
    for (float& v : x) v = v > 0.f ? std::round(v * 2.f) : 0.f;
  const std::vector<float> dy = random_vector(out_n, rng);
  const PoolRef want = ref_pool(s, x, dy);
  for (sp::Isa isa : supported_isas()) {
    sp::force_isa(isa);
    const std::string who = std::string(sp::isa_name(isa)) + " " + describe(s);
    std::vector<float> y(out_n, kNaN), dx(in_n, kNaN);
    std::vector<int32_t> argmax(out_n, -1);
    sk::maxpool_forward(s, x.data(), y.data(), argmax.data());
    expect_same(y, want.y, who + " maxpool_forward");
    BOOST_CHECK_MESSAGE(argmax == want.argmax, who << " argmax differs");
    sk::maxpool_backward(s, dy.data(), want.argmax.data(), dx.data());
    expect_same(dx, want.dx, who + " maxpool_backward");
  }
  sp::force_isa(sp::detected_isa());
}

}  // namespace

BOOST_AUTO_TEST_CASE(im2col_and_col2im_match_reference) {
  std::mt19937 rng(11);
  // batch, in_h, in_w, in_c, kernel, stride, pad, out_c: the CNN's two layers, single
  // channel with padding, odd channels, strides that skip columns, a 1×1 kernel.
  const sk::ConvShape shapes[] = {{3, 28, 28, 1, 5, 1, 0, 32}, {2, 12, 12, 32, 5, 1, 0, 64},
                                  {2, 9, 7, 1, 5, 1, 2, 4},    {1, 11, 10, 3, 3, 2, 1, 8},
                                  {2, 7, 9, 17, 3, 3, 2, 5},   {1, 6, 5, 5, 1, 1, 0, 3},
                                  {1, 5, 5, 2, 5, 1, 4, 1},    {3, 8, 8, 33, 4, 2, 0, 2}};
  for (const sk::ConvShape& s : shapes) check_conv(s, rng);
}

BOOST_AUTO_TEST_CASE(maxpool_matches_reference) {
  std::mt19937 rng(12);
  // batch, in_h, in_w, channels, size, stride: tiling windows (the CNN's), inputs the windows
  // do not cover, overlapping and gapped windows, odd channel counts.
  const sk::PoolShape shapes[] = {{3, 24, 24, 32, 2, 2}, {2, 8, 8, 64, 2, 2}, {2, 7, 9, 5, 2, 2},
                                  {1, 9, 9, 3, 3, 2},    {2, 10, 11, 17, 2, 3}, {1, 6, 6, 1, 3, 3},
                                  {2, 5, 7, 33, 1, 1}};
  for (const sk::PoolShape& s : shapes)
    for (bool ties : {false, true}) check_pool(s, rng, ties);
}

BOOST_AUTO_TEST_CASE(relu_matches_reference) {
  std::mt19937 rng(13);
  for (long n : {1L, 7L, 16L, 37L, 1000L, 4099L}) {
    std::vector<float> x = random_vector(n, rng), dy = random_vector(n, rng);
    x[0] = 0.f;  // exactly zero is "not > 0" on both passes
    std::vector<float> want_y(n), want_dx(n);
    for (long i = 0; i < n; ++i) want_y[i] = x[i] > 0.f ? x[i] : 0.f;
    for (long i = 0; i < n; ++i) want_dx[i] = want_y[i] > 0.f ? dy[i] : 0.f;
    for (sp::Isa isa : supported_isas()) {
      sp::force_isa(isa);
      const std::string who = std::string(sp::isa_name(isa)) + " n=" + std::to_string(n);
      std::vector<float> y(n, kNaN), dx(n, kNaN);
      sk::relu_forward(n, x.data(), y.data());
      expect_same(y, want_y, who + " relu_forward");
      sk::relu_backward(n, y.data(), dy.data(), dx.data());
      expect_same(dx, want_dx, who + " relu_backward");
      // In place, as a layer may call it.
      std::vector<float> inplace = x;
      sk::relu_forward(n, inplace.data(), inplace.data());
      expect_same(inplace, want_y, who + " relu_forward in place");
    }
  }
  sp::force_isa(sp::detected_isa());
}

BOOST_AUTO_TEST_CASE(column_sums_match_reference) {
  std::mt19937 rng(14);
  const int shapes[][2] = {{1, 1}, {8, 10}, {13, 128}, {32, 33}, {4608, 32}, {7, 1}};
  for (const auto& rc : shapes) {
    const int rows = rc[0], cols = rc[1];
    const std::vector<float> dy = random_vector(static_cast<std::size_t>(rows) * cols, rng);
    const std::vector<float> start = random_vector(cols, rng);
    for (bool accumulate : {false, true}) {
      std::vector<float> want = accumulate ? start : std::vector<float>(cols, 0.f);
      // Same grouping as the kernel (four rows added pairwise, then the remaining rows), so the
      // float sums agree exactly.
      int i = 0;
      for (; i + 4 <= rows; i += 4)
        for (int j = 0; j < cols; ++j) {
          const float* r = dy.data() + static_cast<std::size_t>(i) * cols + j;
          want[j] += (r[0] + r[cols]) + (r[2 * cols] + r[3 * cols]);
        }
      for (; i < rows; ++i)
        for (int j = 0; j < cols; ++j) want[j] += dy[static_cast<std::size_t>(i) * cols + j];
      for (sp::Isa isa : supported_isas()) {
        sp::force_isa(isa);
        std::vector<float> db = accumulate ? start : std::vector<float>(cols, kNaN);
        sk::column_sums(rows, cols, dy.data(), db.data(), accumulate);
        expect_same(db, want,
                    std::string(sp::isa_name(isa)) + " column_sums " + std::to_string(rows) + "x" + std::to_string(cols));
      }
    }
  }
  sp::force_isa(sp::detected_isa());
}

// Blocks of 16 cut short on both sides, a single row and column, the CNN's W (800 × 64).
BOOST_AUTO_TEST_CASE(transpose_matches_reference) {
  std::mt19937 rng(15);
  const int shapes[][2] = {{1, 1}, {1, 37}, {37, 1}, {16, 16}, {17, 33}, {800, 64}, {64, 800}};
  for (const auto& rc : shapes) {
    const int rows = rc[0], cols = rc[1];
    const std::vector<float> a = random_vector(static_cast<std::size_t>(rows) * cols, rng);
    std::vector<float> want(a.size());
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        want[static_cast<std::size_t>(j) * rows + i] = a[static_cast<std::size_t>(i) * cols + j];
    for (sp::Isa isa : supported_isas()) {
      sp::force_isa(isa);
      std::vector<float> at(a.size(), kNaN);
      sk::transpose(rows, cols, a.data(), at.data());
      expect_same(at, want, std::string(sp::isa_name(isa)) + " transpose " + std::to_string(rows) + "x" + std::to_string(cols));
    }
  }
  sp::force_isa(sp::detected_isa());
}

// The optimizer and SMA loops may contract to FMAs on the vector paths, so they are held to
// a double-precision reference within a few float roundings rather than to exact bits.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::string& who) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-6 * (1.0 + std::fabs(want[i])))) {
      ++bad;
      BOOST_ERROR(who << " [" << i << "] = " << got[i] << ", want " << want[i]);
    }
}

BOOST_AUTO_TEST_CASE(sgd_step_matches_reference) {
  std::mt19937 rng(15);
  for (long n : {1L, 15L, 16L, 17L, 1001L}) {
    const std::vector<float> w0 = random_vector(n, rng), g = random_vector(n, rng), v0 = random_vector(n, rng);
    for (bool nesterov : {false, true}) {
      const sk::SgdArgs a{0.05f, 0.9f, 1e-4f, nesterov};
      std::vector<double> want_w(n), want_v(n);
      for (long i = 0; i < n; ++i) {
        const double gi = static_cast<double>(g[i]) + static_cast<double>(a.weight_decay) * w0[i];
        want_v[i] = static_cast<double>(a.momentum) * v0[i] + gi;
        want_w[i] = w0[i] - static_cast<double>(a.lr) * (nesterov ? gi + static_cast<double>(a.momentum) * want_v[i] : want_v[i]);
      }
      for (sp::Isa isa : supported_isas()) {
        sp::force_isa(isa);
        std::vector<float> w = w0, v = v0;
        sk::sgd_step(n, w.data(), g.data(), v.data(), a);
        const std::string who = std::string(sp::isa_name(isa)) + " sgd n=" + std::to_string(n) + (nesterov ? " nesterov" : "");
        expect_close(w, want_w, who + " w");
        expect_close(v, want_v, who + " v");
      }
    }
  }
  sp::force_isa(sp::detected_isa());
}

BOOST_AUTO_TEST_CASE(sma_correct_and_center_match_reference) {
  std::mt19937 rng(16);
  const float alpha = 0.3f, mu = 0.5f;
  for (long n : {1L, 15L, 16L, 17L, 1001L}) {
    const std::vector<float> z0 = random_vector(n, rng), zp0 = random_vector(n, rng);
    const std::vector<float> w0 = random_vector(n, rng), start = random_vector(n, rng);
    for (bool accumulate : {false, true}) {
      std::vector<double> want_w(n), want_sum(n), want_z(n), want_zp(n);
      for (long i = 0; i < n; ++i) {
        const double c = static_cast<double>(alpha) * (static_cast<double>(w0[i]) - z0[i]);
        want_w[i] = w0[i] - c;
        want_sum[i] = (accumulate ? static_cast<double>(start[i]) : 0.0) + c;
        want_z[i] = z0[i] + static_cast<double>(mu) * (static_cast<double>(z0[i]) - zp0[i]) + want_sum[i];
        want_zp[i] = z0[i];
      }
      for (sp::Isa isa : supported_isas()) {
        sp::force_isa(isa);
        const std::string who = std::string(sp::isa_name(isa)) + " sma n=" + std::to_string(n) + (accumulate ? " +=" : "");
        std::vector<float> w = w0, sum = accumulate ? start : std::vector<float>(n, kNaN), z = z0, zp = zp0;
        sk::sma_correct(n, z.data(), w.data(), sum.data(), alpha, accumulate);
        expect_close(w, want_w, who + " w");
        expect_close(sum, want_sum, who + " sum");
        sk::sma_center(n, z.data(), zp.data(), sum.data(), mu);
        expect_close(z, want_z, who + " z");
        expect_close(zp, want_zp, who + " z_prev");
        std::vector<float> z_plain = z0;
        sk::sma_center(n, z_plain.data(), nullptr, sum.data(), mu);
        std::vector<double> want_plain(n);
        for (long i = 0; i < n; ++i) want_plain[i] = static_cast<double>(z0[i]) + sum[i];
        expect_close(z_plain, want_plain, who + " z without momentum");
      }
    }
  }
  sp::force_isa(sp::detected_isa());
}
