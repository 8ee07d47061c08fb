// Native GEMM entry: argument edge cases, the per-call ISA choice, and the optional split
// over std::threads when kernels::threads() allows more than one.
#include "kernels/native/gemm_native.h"

#include "kernels/epilogue.h"
#include "kernels/native/isa_gemm.h"
#include "kernels/native/split.h"
#include "platform/isa_dispatch.h"

#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

namespace starling::kernels::native {
namespace {

// Below this many multiply-adds a thread start (tens of µs) costs more than it saves.
constexpr double kMinFmasPerThread = 4.0e6;

#if defined(__x86_64__)
// Up to this many rows, A·Bᵀ is faster as dot products than by gathering Bᵀ into panels.
constexpr int kDotMaxRows = 64;

bool use_dot(const GemmArgs& g) {
  return g.trans_b && !g.trans_a && g.m <= kDotMaxRows && g.k >= 16;
}

// A·Bᵀ runs as Cᵀ = B·Aᵀ (vectors along m) from 16 to 64 rows when k ≥ 16, where it beats
// the dot kernel; past 64 rows packing B for the blocked kernel pays off. At k < 16 its
// transposed stores dominate and the blocked kernel with a vector-transposed B panel wins
// at every m (bench_kernels). STARLING_GEMM_NT_MIN / _MAX move the bounds.
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

bool use_nt(const GemmArgs& g) {
  static const int lo = env_int("STARLING_GEMM_NT_MIN", 16);
  static const int hi = env_int("STARLING_GEMM_NT_MAX", 64);
  return g.trans_b && !g.trans_a && g.k >= 16 && g.m >= lo && g.m <= hi;
}

void run_avx512(const GemmArgs& args) {
  if (args.velocity) return gemm_avx512(args);  // the nt and dot kernels have no SGD epilogue
  if (use_nt(args)) return gemm_avx512_nt(args);
  if (use_dot(args)) return gemm_avx512_dot(args);
  gemm_avx512(args);
}

// AVX2's A·Bᵀ over at most 8 rows as Cᵀ = B·Aᵀ, from k = 16: below, the blocked kernel's
// transposed B panel is short and its tiles win (bench_kernels).
void run_avx2(const GemmArgs& args) {
  if (!args.velocity && args.trans_b && !args.trans_a && args.m <= 8 && args.k >= 16) return gemm_avx2_nt(args);
  gemm_avx2(args);
}
#endif

constexpr platform::IsaDispatch<void (*)(const GemmArgs&)> kGemm{
    gemm_scalar, STARLING_X86_64_ONLY(run_avx2), STARLING_X86_64_ONLY(run_avx512), STARLING_ARM64_ONLY(gemm_neon)};

void run_single(const GemmArgs& args) { kGemm.get()(args); }

// k == 0: the product is zero, so C is unchanged (accumulate) or zero, then the epilogue.
void zero_product(const GemmArgs& args) {
  if (!args.accumulate)
    for (int i = 0; i < args.m; ++i)
      for (int j = 0; j < args.n; ++j) args.c[static_cast<long>(i) * args.ldc + j] = 0.f;
  if (detail::has_epilogue(args)) detail::apply_epilogue(args);
}

int useful_threads(const GemmArgs& args) {
  const double fmas = static_cast<double>(args.m) * args.n * args.k;
  const int by_work = static_cast<int>(fmas / kMinFmasPerThread);
  const int allowed = kernels::threads();
  return by_work < allowed ? (by_work < 1 ? 1 : by_work) : allowed;
}

void run_threaded(const GemmArgs& args, int parts) {
  // 96 is a multiple of every kernel's MR (4/6/8 rows) and of every NR (8/16/32/48 columns)
  // but the SGD epilogue's 64, where a piece of columns ends in a narrower tile.
  const std::vector<GemmArgs> pieces = split(args, parts, 96);
  // A worker's exception (bad_alloc of its pack buffer) must reach the caller, not terminate.
  std::vector<std::exception_ptr> errors(pieces.size());
  std::vector<std::thread> workers;
  workers.reserve(pieces.size());
  auto work = [&](std::size_t p) {
    try {
      run_single(pieces[p]);
    } catch (...) {
      errors[p] = std::current_exception();
    }
  };
  for (std::size_t p = 1; p < pieces.size(); ++p) workers.emplace_back(work, p);
  if (!pieces.empty()) work(0);
  for (std::thread& w : workers) w.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// Strides shorter than a stored row would make rows overlap; reject like dnnl_sgemm does.
void check(const GemmArgs& g) {
  const int a_cols = g.trans_a ? g.m : g.k;
  const int b_cols = g.trans_b ? g.k : g.n;
  if (!g.a || !g.b || g.lda < a_cols || g.ldb < b_cols || g.ldc < g.n ||
      (g.relu_mask && g.ldmask < g.n))
    throw std::invalid_argument("native gemm: null operand or leading dimension too small");
}

}  // namespace

void gemm(const GemmArgs& args) {
  if (args.m <= 0 || args.n <= 0 || !args.c) return;
  if (args.ldc < args.n) throw std::invalid_argument("native gemm: ldc smaller than n");
  // The vector kernels fuse the SGD epilogue, falling back themselves where they cannot.
  if (args.velocity && (args.k <= 0 || platform::active_isa() == platform::Isa::scalar))
    return detail::gemm_then_sgd(args, gemm);
  if (args.k <= 0) return zero_product(args);
  check(args);
  const int parts = useful_threads(args);
  if (parts > 1) run_threaded(args, parts);
  else run_single(args);
}

}  // namespace starling::kernels::native
