#pragma once
// oneDNN backend: dnnl_sgemm plus a separate epilogue pass. The yardstick for native/.
#include "kernels/gemm.h"

namespace starling::kernels::onednn {

void gemm(const GemmArgs& args);
void set_threads(int threads);

}  // namespace starling::kernels::onednn
