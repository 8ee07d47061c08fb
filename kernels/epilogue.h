#pragma once
// The GEMM epilogue (bias, ReLU, ReLU-gradient mask) as a separate pass over C, for backends
// whose GEMM cannot fuse it. Internal to kernels/.
#include "kernels/gemm.h"

namespace starling::kernels::detail {

bool has_epilogue(const GemmArgs& args);
void apply_epilogue(const GemmArgs& args);

}  // namespace starling::kernels::detail
