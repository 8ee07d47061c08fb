#include "kernels/direct_conv.h"

#include "kernels/native/direct_conv_isa.h"
#include "platform/isa_dispatch.h"

#include <cstring>

namespace starling::kernels {

namespace {

// AVX2, AVX-512 and NEON have these kernels; the scalar path takes im2col and the GEMM.
constexpr platform::IsaDispatch<decltype(&native::direct_conv_avx512)> kConv{
    nullptr, STARLING_X86_64_ONLY(native::direct_conv_avx2), STARLING_X86_64_ONLY(native::direct_conv_avx512),
    STARLING_ARM64_ONLY(native::direct_conv_neon)};
constexpr platform::IsaDispatch<decltype(&native::direct_conv_weight_gradient_avx512)> kWeightGradient{
    nullptr, STARLING_X86_64_ONLY(native::direct_conv_weight_gradient_avx2),
    STARLING_X86_64_ONLY(native::direct_conv_weight_gradient_avx512),
    STARLING_ARM64_ONLY(native::direct_conv_weight_gradient_neon)};
constexpr platform::IsaDispatch<decltype(&native::direct_conv_narrow_weight_gradient_avx512)> kNarrowWeightGradient{
    nullptr, STARLING_X86_64_ONLY(native::direct_conv_narrow_weight_gradient_avx2),
    STARLING_X86_64_ONLY(native::direct_conv_narrow_weight_gradient_avx512),
    STARLING_ARM64_ONLY(native::direct_conv_narrow_weight_gradient_neon)};
constexpr platform::IsaDispatch<decltype(&native::narrow_window_row)> kNarrowWindowRow{
    nullptr, STARLING_X86_64_ONLY(native::narrow_window_row_avx2), STARLING_X86_64_ONLY(native::narrow_window_row),
    STARLING_ARM64_ONLY(native::narrow_window_row_neon)};

}  // namespace

// kConv first: each narrow_window_row is compiled for its ISA.
bool direct_conv_supported(const ConvShape& s) {
  if (!kConv.get() || s.stride != 1 || s.out_c % 16 != 0 || s.batch <= 0) return false;
  return s.in_c % 16 == 0 || (s.in_c < 16 && kNarrowWindowRow.get()(s));
}

bool direct_input_gradient_supported(const ConvShape& s) {
  return direct_conv_supported(s) && 2 * s.pad == s.kernel - 1 && direct_conv_supported(transposed(s));
}

long padded_size(const ConvShape& s) {
  return static_cast<long>(s.batch) * (s.in_h + 2 * s.pad) * (s.in_w + 2 * s.pad) * s.in_c;
}

// Only the border is zeroed: the inside is overwritten row by row.
void pad_input(const ConvShape& s, const float* x, float* xp) {
  const long row = static_cast<long>(s.in_w) * s.in_c, padded_row = static_cast<long>(s.in_w + 2 * s.pad) * s.in_c;
  const long border = static_cast<long>(s.pad) * s.in_c, band = s.pad * padded_row;
  const std::size_t border_bytes = sizeof(float) * static_cast<std::size_t>(border);
  for (int n = 0; n < s.batch; ++n) {
    float* sample = xp + static_cast<long>(n) * (s.in_h + 2 * s.pad) * padded_row;
    std::memset(sample, 0, sizeof(float) * static_cast<std::size_t>(band));
    for (int h = 0; h < s.in_h; ++h) {
      float* dst = sample + (h + s.pad) * padded_row;
      std::memset(dst, 0, border_bytes);
      std::memcpy(dst + border, x + (static_cast<long>(n) * s.in_h + h) * row, sizeof(float) * static_cast<std::size_t>(row));
      std::memset(dst + border + row, 0, border_bytes);
    }
    std::memset(sample + (s.in_h + s.pad) * padded_row, 0, sizeof(float) * static_cast<std::size_t>(band));
  }
}

void direct_conv(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y) {
  kConv.get()(s, xp, w, bias, relu, y);
}

bool direct_conv_weight_gradient(const ConvShape& s, const float* xp, const float* dy, float* dw, float* dwt,
                                 bool accumulate) {
  const bool wide = s.in_c % 16 == 0;
  if (wide) kWeightGradient.get()(s, xp, dy, dwt, accumulate);
  else kNarrowWeightGradient.get()(s, xp, dy, dw, accumulate);
  return wide;
}

void flip_weights(const ConvShape& s, const float* w, float* wf) {
  const int k = s.kernel;
  for (int kh = 0; kh < k; ++kh)
    for (int kw = 0; kw < k; ++kw)
      for (int o = 0; o < s.out_c; ++o)
        for (int c = 0; c < s.in_c; ++c) {
          const long from = ((static_cast<long>(k - 1 - kh) * k + (k - 1 - kw)) * s.in_c + c) * s.out_c + o;
          wf[((static_cast<long>(kh) * k + kw) * s.out_c + o) * s.in_c + c] = w[from];
        }
}

ConvShape transposed(const ConvShape& s) {
  ConvShape t = s;
  t.in_c = s.out_c, t.out_c = s.in_c;
  return t;
}

}  // namespace starling::kernels
