#pragma once
// Entry points of the per-ISA direct-convolution kernels (kernels/direct_conv.h); the caller
// must only enter them where direct_conv_supported says so. The AVX2 and NEON sets mirror
// the AVX-512 one, each compiled for its own ISA.
#include "kernels/ops.h"

namespace starling::kernels::native {

void direct_conv_avx512(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y);
/// dWᵀ, overwritten or, with accumulate, added to.
void direct_conv_weight_gradient_avx512(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate);
/// For inputs of fewer than 16 channels, dW in the weights' layout (the same file); needs
/// narrow_window_row(s).
void direct_conv_narrow_weight_gradient_avx512(const ConvShape& s, const float* xp, const float* dy, float* dw,
                                                bool accumulate);
/// Whether the narrow kernel has an instantiation for a window row of s.kernel·s.in_c floats.
/// Compiled for AVX-512 like the kernels: call it only where the CPU has AVX-512.
bool narrow_window_row(const ConvShape& s);

void direct_conv_avx2(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y);
void direct_conv_weight_gradient_avx2(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate);
void direct_conv_narrow_weight_gradient_avx2(const ConvShape& s, const float* xp, const float* dy, float* dw,
                                              bool accumulate);
bool narrow_window_row_avx2(const ConvShape& s);

void direct_conv_neon(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y);
void direct_conv_weight_gradient_neon(const ConvShape& s, const float* xp, const float* dy, float* dwt, bool accumulate);
void direct_conv_narrow_weight_gradient_neon(const ConvShape& s, const float* xp, const float* dy, float* dw,
                                              bool accumulate);
bool narrow_window_row_neon(const ConvShape& s);

}  // namespace starling::kernels::native
