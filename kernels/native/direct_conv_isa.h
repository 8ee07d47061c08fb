#pragma once
// Entry points of the per-ISA direct-convolution kernels (kernels/direct_conv.h); the caller
// must only enter it where direct_conv_supported says so.
#include "kernels/ops.h"

namespace starling::kernels::native {

void direct_conv_avx512(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y);
void direct_conv_weight_gradient_avx512(const ConvShape& s, const float* xp, const float* dy, float* dwt);

}  // namespace starling::kernels::native
