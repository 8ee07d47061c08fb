#pragma once
// Starling's own GEMM: packed, cache- and register-blocked, with AVX-512 / AVX2 / scalar
// micro-kernels picked at run time (platform/cpu_features.h).
#include "kernels/gemm.h"

namespace starling::kernels::native {

void gemm(const GemmArgs& args);

}  // namespace starling::kernels::native
