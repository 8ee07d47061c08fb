#pragma once
// The non-GEMM kernels of ops.h as a table of function pointers, one table per instruction
// set; ops.cpp picks the table for active_isa() on every call.
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
  void (*sma_correct)(long, const float*, float*, float*, float, bool) = nullptr;
  void (*sma_center)(long, float*, float*, const float*, float) = nullptr;
};

/// Built with baseline x86-64 flags (SSE2): runs anywhere.
const OpsTable& ops_baseline();
/// Built with -mavx2 -mfma; only for CPUs active_isa() reports as avx2 or better.
const OpsTable& ops_avx2();
/// Built with AVX-512 F/BW/DQ/VL; only when active_isa() is avx512.
const OpsTable& ops_avx512();

}  // namespace starling::kernels::ops_detail
