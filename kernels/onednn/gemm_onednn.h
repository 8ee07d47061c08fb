#pragma once
// oneDNN backend: dnnl_sgemm plus a separate epilogue pass. The yardstick for native/.
#include "kernels/gemm.h"

namespace starling::kernels::onednn {

void gemm(const GemmArgs& args);
void set_threads(int threads);
/// oneDNN's name of the ISA its kernels dispatch to here (dnnl_get_effective_cpu_isa).
const char* effective_isa();

}  // namespace starling::kernels::onednn
