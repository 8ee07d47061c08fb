#pragma once
// The GEMM epilogues as separate passes over C, for backends and shapes whose GEMM cannot
// fuse them. Internal to kernels/.
#include "kernels/gemm.h"

namespace starling::kernels::detail {

bool has_epilogue(const GemmArgs& args);
/// Bias, ReLU and ReLU-gradient mask over C.
void apply_epilogue(const GemmArgs& args);
/// The SGD epilogue (args.velocity): `product` computes the gradient into a scratch matrix
/// (args without velocity, C redirected), then sgd_step updates C and velocity row by row,
/// or in one pass where C's rows are contiguous.
void gemm_then_sgd(const GemmArgs& args, void (*product)(const GemmArgs&));
/// std::invalid_argument when the SGD epilogue is combined with another option.
void check_sgd_epilogue(const GemmArgs& args);

}  // namespace starling::kernels::detail
