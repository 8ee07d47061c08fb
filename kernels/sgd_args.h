#pragma once
// The SGD step's hyperparameters, shared by the optimizer pass (ops.h, sgd_step) and the
// GEMM epilogue that fuses the same step into a weight gradient (gemm.h, GemmArgs::velocity):
//   g' = g + wd·w,  v ← μ v + g',  w ← w − lr (g' + μ v) (Nesterov) or w ← w − lr v.
namespace starling::kernels {

struct SgdArgs {
  float lr = 0.f, momentum = 0.f, weight_decay = 0.f;
  bool nesterov = false;
};

}  // namespace starling::kernels
