#pragma once
// Single-precision GEMM for training, row-major, without explicit transposes:
//   C[m×n] (=|+=) op(A)[m×k] · op(B)[k×n]  then  + bias[n] per row, then ReLU,
//   then × (relu_mask[i,j] > 0)  (the ReLU-gradient mask of the layer below).
// Forward X·W, input gradient dY·Wᵀ (trans_b) and weight gradient Xᵀ·dY (trans_a) are all
// one call. Every backend honours the whole contract, epilogue included.
// With `velocity`, the epilogue is instead an optimizer step: C holds parameters, the product
// is their gradient, and C takes one SGD step without the gradient ever being stored.
#include "kernels/sgd_args.h"

#include <iterator>
#include <string>
#include <string_view>

namespace starling::kernels {

enum class Backend { native, onednn };
/// The config's name of each backend, indexed by Backend.
inline constexpr const char* kBackendNames[] = {"native", "onednn"};
static_assert(std::size(kBackendNames) == static_cast<std::size_t>(Backend::onednn) + 1, "one name per Backend");

std::string_view backend_name(Backend backend);
/// Parses a name of kBackendNames; returns false on anything else.
bool parse_backend(std::string_view text, Backend& out);

struct GemmArgs {
  int m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int lda = 0;  // row stride of A as stored (k if !trans_a, m if trans_a, or larger)
  bool trans_a = false;
  const float* b = nullptr;
  int ldb = 0;  // row stride of B as stored (n if !trans_b, k if trans_b, or larger)
  bool trans_b = false;
  float* c = nullptr;
  int ldc = 0;
  bool accumulate = false;         // C += product instead of C = product
  const float* bias = nullptr;     // length n, added to every row of C
  bool relu = false;               // C = max(C, 0) after the bias
  const float* relu_mask = nullptr;  // m×n with row stride ldmask: zero C where mask <= 0
  int ldmask = 0;
  // The SGD epilogue: C ← sgd(C, product) with this velocity, laid out like C (ldc), updated
  // in place. Excludes accumulate, bias, relu and relu_mask (std::invalid_argument).
  float* velocity = nullptr;
  SgdArgs sgd;
};

/// Whether this build has the backend: oneDNN is optional at configure time
/// (-DSTARLING_ONEDNN=OFF builds the native kernels alone).
bool backend_available(Backend backend);

/// The instruction set the backend's kernels run on in this process, as the backend names it
/// ("avx2" for native; "avx2", "avx512_core", … for oneDNN, which ONEDNN_MAX_CPU_ISA caps), so
/// that a benchmark can say which each party ran; throws std::invalid_argument for a backend
/// this build lacks.
std::string backend_isa(Backend backend);

/// Runs the GEMM on the given backend (std::invalid_argument for one this build lacks). Sizes of 0 are valid and do nothing to C beyond
/// what the contract says (k == 0 writes the epilogue of a zero product).
void gemm(Backend backend, const GemmArgs& args);

/// Number of threads a single kernel call may use (default 1: parallelism comes from
/// learners). Applies to both backends.
void set_threads(int threads);
int threads();

}  // namespace starling::kernels
