// The direct convolution against a double-precision reference on shapes with ragged row
// widths (tiles of 14 and 7 pixels cut short, or split evenly), every supported channel
// blocking, kernels of 1, 3, 4 and 5 at "same" and other paddings, with and without bias
// and ReLU; and the input gradient it gives
// with flipped weights, and the weight gradient from the bordered input, against the
// reference's sums over outputs. On ISA paths without the kernel,
// direct_conv_supported must say no.
#define BOOST_TEST_MODULE kernels_direct_conv
#include <boost/test/unit_test.hpp>

#include "platform/cpu_features.h"
#include "tests/isa_paths.h"
#include "kernels/direct_conv.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;

namespace {

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// y[n, h, w, o] = Σ x[n, h + kh − pad, w + kw − pad, c] · w[(kh, kw, c), o], zero outside.
std::vector<double> reference(const sk::ConvShape& s, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<double> y(static_cast<std::size_t>(s.batch) * s.out_h() * s.out_w() * s.out_c);
  for (int n = 0; n < s.batch; ++n)
    for (int h = 0; h < s.out_h(); ++h)
      for (int q = 0; q < s.out_w(); ++q)
        for (int o = 0; o < s.out_c; ++o) {
          double sum = 0.0;
          for (int kh = 0; kh < s.kernel; ++kh)
            for (int kw = 0; kw < s.kernel; ++kw) {
              const int ih = h + kh - s.pad, iw = q + kw - s.pad;
              if (ih < 0 || ih >= s.in_h || iw < 0 || iw >= s.in_w) continue;
              for (int c = 0; c < s.in_c; ++c)
                sum += static_cast<double>(x[((static_cast<long>(n) * s.in_h + ih) * s.in_w + iw) * s.in_c + c]) *
                       w[((static_cast<long>(kh) * s.kernel + kw) * s.in_c + c) * s.out_c + o];
            }
          y[((static_cast<long>(n) * s.out_h() + h) * s.out_w() + q) * s.out_c + o] = sum;
        }
  return y;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::string& who) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-4 * (1.0 + std::fabs(want[i])))) {
      ++bad;
      BOOST_ERROR(who << " [" << i << "] = " << got[i] << ", want " << want[i]);
    }
}

// pad −1: "same", (kernel − 1)/2.
sk::ConvShape shape(int batch, int h, int w, int in_c, int kernel, int out_c, int pad = -1) {
  sk::ConvShape s;
  s.batch = batch, s.in_h = h, s.in_w = w, s.in_c = in_c, s.kernel = kernel, s.stride = 1;
  s.pad = pad < 0 ? (kernel - 1) / 2 : pad, s.out_c = out_c;
  return s;
}

void check_forward(const sk::ConvShape& s, std::mt19937& rng) {
  const std::string who = "b" + std::to_string(s.batch) + " " + std::to_string(s.in_h) + "x" + std::to_string(s.in_w) +
                          "x" + std::to_string(s.in_c) + " k" + std::to_string(s.kernel) + " pad " +
                          std::to_string(s.pad) + " →" + std::to_string(s.out_c);
  const std::vector<float> x = random_vector(static_cast<std::size_t>(s.batch) * s.in_h * s.in_w * s.in_c, rng);
  const std::vector<float> w = random_vector(static_cast<std::size_t>(s.patch()) * s.out_c, rng);
  const std::vector<float> bias = random_vector(s.out_c, rng);
  std::vector<double> want = reference(s, x, w);
  std::vector<float> xp(sk::padded_size(s), 7.f), y(want.size());
  sk::pad_input(s, x.data(), xp.data());
  sk::direct_conv(s, xp.data(), w.data(), nullptr, false, y.data());
  expect_close(y, want, who);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] += bias[i % s.out_c];
    want[i] = want[i] > 0.0 ? want[i] : 0.0;
  }
  sk::direct_conv(s, xp.data(), w.data(), bias.data(), true, y.data());
  expect_close(y, want, who + " bias relu");
}

// f(out, in, tap) for every output pixel, window tap and input pixel under it (stride 1):
// the offsets of the output pixel's dy, of the input pixel's x and the tap's first weight row.
template <typename F>
void for_each_tap(const sk::ConvShape& s, F f) {
  for (int n = 0; n < s.batch; ++n)
    for (int h = 0; h < s.out_h(); ++h)
      for (int q = 0; q < s.out_w(); ++q)
        for (int kh = 0; kh < s.kernel; ++kh)
          for (int kw = 0; kw < s.kernel; ++kw) {
            const int ih = h + kh - s.pad, iw = q + kw - s.pad;
            if (ih < 0 || ih >= s.in_h || iw < 0 || iw >= s.in_w) continue;
            f(((static_cast<long>(n) * s.out_h() + h) * s.out_w() + q) * s.out_c,
              ((static_cast<long>(n) * s.in_h + ih) * s.in_w + iw) * s.in_c, (static_cast<long>(kh) * s.kernel + kw) * s.in_c);
          }
}

// dx[n, h, w, c] = Σ over the outputs whose window covers (h, w) of dy · w: the reference
// as a sum over outputs, against the direct convolution of dy with the flipped weights.
void check_input_gradient(const sk::ConvShape& s, std::mt19937& rng) {
  const std::vector<float> w = random_vector(static_cast<std::size_t>(s.patch()) * s.out_c, rng);
  const std::vector<float> dy = random_vector(static_cast<std::size_t>(s.batch) * s.out_h() * s.out_w() * s.out_c, rng);
  std::vector<double> want(static_cast<std::size_t>(s.batch) * s.in_h * s.in_w * s.in_c);
  for_each_tap(s, [&](long out, long in, long tap) {
    for (int c = 0; c < s.in_c; ++c)
      for (int o = 0; o < s.out_c; ++o) want[in + c] += static_cast<double>(dy[out + o]) * w[(tap + c) * s.out_c + o];
  });
  const sk::ConvShape t = sk::transposed(s);
  std::vector<float> wf(w.size()), dyp(sk::padded_size(t)), dx(want.size());
  sk::flip_weights(s, w.data(), wf.data());
  sk::pad_input(t, dy.data(), dyp.data());
  sk::direct_conv(t, dyp.data(), wf.data(), nullptr, false, dx.data());
  expect_close(dx, want, "input gradient " + std::to_string(s.in_c) + "→" + std::to_string(s.out_c));
}

// dWᵀ[o, (kh, kw, c)] = Σ over outputs of dy · the input under that tap (narrow inputs give dW,
// compared transposed).
void check_weight_gradient(const sk::ConvShape& s, std::mt19937& rng) {
  const std::vector<float> x = random_vector(static_cast<std::size_t>(s.batch) * s.in_h * s.in_w * s.in_c, rng);
  const std::vector<float> dy = random_vector(static_cast<std::size_t>(s.batch) * s.out_h() * s.out_w() * s.out_c, rng);
  std::vector<double> want(static_cast<std::size_t>(s.out_c) * s.patch());
  for_each_tap(s, [&](long out, long in, long tap) {
    for (int c = 0; c < s.in_c; ++c)
      for (int o = 0; o < s.out_c; ++o) want[o * s.patch() + tap + c] += static_cast<double>(dy[out + o]) * x[in + c];
  });
  std::vector<float> xp(sk::padded_size(s)), dw(want.size(), 7.f), dwt(want.size(), 7.f);
  sk::pad_input(s, x.data(), xp.data());
  const bool transposed = sk::direct_conv_weight_gradient(s, xp.data(), dy.data(), dw.data(), dwt.data());
  BOOST_TEST(transposed == (s.in_c % 16 == 0));  // the layout each kernel tiles
  if (!transposed)
    for (int o = 0; o < s.out_c; ++o)
      for (long q = 0; q < s.patch(); ++q) dwt[o * s.patch() + q] = dw[q * s.out_c + o];
  const std::string who = "weight gradient b" + std::to_string(s.batch) + " " + std::to_string(s.in_c) + "→" +
                          std::to_string(s.out_c) + " k" + std::to_string(s.kernel) + " pad " + std::to_string(s.pad);
  expect_close(dwt, want, who);
  // accumulate adds the same sums to what the layout holds.
  std::fill(dw.begin(), dw.end(), 7.f);
  std::fill(dwt.begin(), dwt.end(), 7.f);
  sk::direct_conv_weight_gradient(s, xp.data(), dy.data(), dw.data(), dwt.data(), true);
  if (!transposed)
    for (int o = 0; o < s.out_c; ++o)
      for (long q = 0; q < s.patch(); ++q) dwt[o * s.patch() + q] = dw[q * s.out_c + o];
  for (double& w : want) w += 7.0;
  expect_close(dwt, want, who + " accumulated");
}

}  // namespace

BOOST_AUTO_TEST_CASE(direct_conv_matches_double_reference) {
  std::mt19937 rng(31);
  for (sp::Isa isa : starling::testing::supported_isas()) {
    sp::force_isa(isa);
    const sk::ConvShape s = shape(2, 5, 29, 16, 3, 16);
    if (isa == sp::Isa::scalar) {
      BOOST_TEST(!sk::direct_conv_supported(s));
      continue;
    }
    BOOST_TEST(sk::direct_conv_supported(s));
    BOOST_TEST(!sk::direct_conv_supported(shape(2, 5, 29, 8, 3, 16)));  // channels not in 16s
    sk::ConvShape strided = s;
    strided.stride = 2;
    BOOST_TEST(!sk::direct_conv_supported(strided));
    for (const sk::ConvShape& c : {s, shape(1, 3, 13, 32, 3, 32), shape(2, 4, 7, 64, 3, 64), shape(1, 6, 25, 16, 5, 48),
                                   shape(1, 2, 15, 48, 1, 128), shape(3, 1, 1, 16, 3, 32)})
      check_forward(c, rng);
    check_input_gradient(shape(2, 5, 11, 16, 3, 32), rng);
    check_input_gradient(shape(1, 4, 13, 32, 3, 16), rng);
    // Tiles of 48, 32 and 16 window floats; chunks of samples (28×28×16 fills one at 4).
    check_weight_gradient(shape(3, 5, 11, 16, 3, 32), rng);
    check_weight_gradient(shape(2, 3, 7, 32, 1, 16), rng);
    check_weight_gradient(shape(2, 4, 6, 16, 5, 16), rng);
    check_weight_gradient(shape(9, 28, 28, 16, 3, 16), rng);
    // Wide inputs at other paddings: the CNN's second layer (no padding, rows of 8 pixels in
    // two tiles of 4 under 64 channels), an even kernel, and a border wider than "same".
    for (const sk::ConvShape& c : {shape(3, 12, 12, 32, 5, 64, 0), shape(2, 7, 10, 16, 4, 32, 1),
                                   shape(1, 5, 9, 16, 3, 48, 2)}) {
      BOOST_TEST(sk::direct_conv_supported(c));
      check_forward(c, rng);
      check_weight_gradient(c, rng);
    }
  }
  sp::force_isa(sp::detected_isa());
}

// Inputs of fewer than 16 channels: any padding, window rows of 1 to 15 floats, the forward
// pass and the weight gradient (whose tiles run along output channels, 16 or 32 at a time);
// the input gradient is not direct for them, nor for any padding but "same".
BOOST_AUTO_TEST_CASE(direct_conv_of_narrow_inputs_matches_double_reference) {
  std::mt19937 rng(37);
  for (sp::Isa isa : starling::testing::supported_isas()) {
    sp::force_isa(isa);
    const sk::ConvShape conv1 = shape(9, 28, 28, 1, 5, 32, 0);  // the CNN's first layer: two chunks of samples
    if (isa == sp::Isa::scalar) {
      BOOST_TEST(!sk::direct_conv_supported(conv1));
      continue;
    }
    BOOST_TEST(sk::direct_conv_supported(conv1));
    BOOST_TEST(!sk::direct_input_gradient_supported(conv1));
    BOOST_TEST(!sk::direct_conv_supported(shape(2, 9, 9, 2, 5, 32)));   // a window row of 10 floats
    BOOST_TEST(!sk::direct_conv_supported(shape(2, 9, 9, 1, 5, 24)));   // channels out not in 16s
    BOOST_TEST(sk::direct_conv_supported(shape(2, 9, 9, 16, 3, 16, 0)));  // wide, not "same"
    BOOST_TEST(!sk::direct_input_gradient_supported(shape(2, 9, 9, 16, 3, 16, 0)));
    BOOST_TEST(sk::direct_input_gradient_supported(shape(2, 9, 9, 16, 3, 16)));
    sk::ConvShape strided = conv1;
    strided.stride = 2;
    BOOST_TEST(!sk::direct_conv_supported(strided));
    const sk::ConvShape shapes[] = {conv1,
                                    shape(2, 7, 13, 1, 3, 16, 1),
                                    shape(1, 9, 23, 1, 7, 64, 2),
                                    shape(3, 5, 6, 1, 1, 48, 0),
                                    shape(2, 8, 17, 3, 3, 32, 0),
                                    shape(2, 9, 11, 3, 5, 32, 2),
                                    shape(1, 6, 29, 3, 5, 16, 1)};
    for (const sk::ConvShape& c : shapes) {
      BOOST_TEST(sk::direct_conv_supported(c));
      check_forward(c, rng);
      check_weight_gradient(c, rng);
    }
  }
  sp::force_isa(sp::detected_isa());
}
