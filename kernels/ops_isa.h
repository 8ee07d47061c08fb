#pragma once
// The non-GEMM kernels of ops.h as a table of function pointers, one table per instruction
// set; ops.cpp picks one through platform::IsaDispatch on every call.
#include "kernels/ops.h"

#include <cstdint>

namespace starling::kernels::ops_detail {

struct OpsTable {
  void (*im2col)(const ConvShape&, const float*, float*) = nullptr;
  void (*col2im)(const ConvShape&, const float*, float*) = nullptr;
  void (*maxpool_forward)(const PoolShape&, const float*, float*, int32_t*) = nullptr;
  void (*maxpool_backward)(const PoolShape&, const float*, const int32_t*, float*) = nullptr;
  void (*relu_forward)(long, const float*, float*) = nullptr;
  void (*relu_backward)(long, const float*, const float*, float*) = nullptr;
  void (*column_sums)(int, int, const float*, float*, bool) = nullptr;
  void (*groupnorm_forward)(const NormShape&, const float*, const float*, const float*, bool, float*, float*, float*,
                            float*) = nullptr;
  void (*groupnorm_backward)(const NormShape&, const float*, const float*, const float*, const float*, const float*,
                             const float*, float*, float*, float*, float*) = nullptr;
  void (*sgd_step)(long, float*, const float*, float*, const SgdArgs&) = nullptr;
  void (*transpose)(int, int, const float*, float*) = nullptr;
  void (*sma_correct)(long, const float*, float*, float*, float, bool) = nullptr;
  void (*sma_center)(long, float*, float*, const float*, float) = nullptr;
};

// Constant-initialized, so no code of an ISA file runs before dispatch picks it.
/// Built with baseline flags (x86-64: SSE2; AArch64: NEON): runs anywhere.
extern const OpsTable kOpsBaseline;
/// Built with -mavx2 -mfma.
extern const OpsTable kOpsAvx2;
/// Built with AVX-512 F/BW/DQ/VL.
extern const OpsTable kOpsAvx512;

}  // namespace starling::kernels::ops_detail
