// oneDNN backend: dnnl_sgemm for the product, then the shared epilogue pass.
#include "kernels/onednn/gemm_onednn.h"

#include "kernels/epilogue.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <omp.h>

#include <stdexcept>
#include <string_view>

namespace starling::kernels::onednn {

namespace {

// omp_set_num_threads sets the calling thread's OpenMP ICV only, so a learner thread that
// never called set_threads would run dnnl_sgemm on every core (spinning against the other
// learners). Re-apply kernels::threads() on each calling thread when it differs.
void match_thread_count() {
  const int want = kernels::threads();
  if (omp_get_max_threads() != want) omp_set_num_threads(want);
}

}  // namespace

void gemm(const GemmArgs& a) {
  match_thread_count();
  const float beta = a.accumulate ? 1.f : 0.f;
  dnnl_status_t status = dnnl_success;
  if (a.k == 0) {
    // dnnl_sgemm rejects K == 0; the product is zero.
    for (int i = 0; i < a.m && !a.accumulate; ++i)
      for (int j = 0; j < a.n; ++j) a.c[static_cast<long>(i) * a.ldc + j] = 0.f;
  } else {
    status = dnnl_sgemm(a.trans_a ? 'T' : 'N', a.trans_b ? 'T' : 'N', a.m, a.n, a.k, 1.f, a.a,
                        a.lda, a.b, a.ldb, beta, a.c, a.ldc);
  }
  if (status != dnnl_success) throw std::invalid_argument("dnnl_sgemm rejected its arguments");
  if (detail::has_epilogue(a)) detail::apply_epilogue(a);
}

void set_threads(int threads) { omp_set_num_threads(threads); }

const char* effective_isa() {
#if defined(__x86_64__)
  const char* name = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());  // "cpu_isa_avx2", …
  const std::string_view prefix = "cpu_isa_";
  return std::string_view(name).substr(0, prefix.size()) == prefix ? name + prefix.size() : name;
#else
  return "aarch64";  // oneDNN's ISA query names x86 levels only
#endif
}

}  // namespace starling::kernels::onednn
