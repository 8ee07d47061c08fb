#pragma once
// Entry points of the per-ISA GEMM files. Each runs a whole single-threaded GEMM with
// m, n, k > 0; the caller must only enter the ones active_isa() allows.
#include "kernels/gemm.h"

namespace starling::kernels::native {

void gemm_scalar(const GemmArgs& args);
void gemm_avx2(const GemmArgs& args);
/// C = A·Bᵀ (trans_b, not trans_a) as Cᵀ = B·Aᵀ without packing B; for 1 to 8 rows.
void gemm_avx2_nt(const GemmArgs& args);
void gemm_avx512(const GemmArgs& args);
/// C = A·Bᵀ (trans_b, not trans_a) without packing; for few rows and k ≥ 16.
void gemm_avx512_dot(const GemmArgs& args);
/// C = A·Bᵀ (trans_b, not trans_a) as Cᵀ = B·Aᵀ with Aᵀ packed; for up to 64 rows.
void gemm_avx512_nt(const GemmArgs& args);
void gemm_neon(const GemmArgs& args);

}  // namespace starling::kernels::native
