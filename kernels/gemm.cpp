#include "kernels/gemm.h"

#include "kernels/epilogue.h"
#include "kernels/native/gemm_native.h"
#ifdef STARLING_HAVE_ONEDNN
#include "kernels/onednn/gemm_onednn.h"
#endif

#include "platform/cpu_features.h"

#include <atomic>
#include <stdexcept>

namespace starling::kernels {
namespace {
std::atomic<int> g_threads{1};
}

std::string_view backend_name(Backend backend) { return kBackendNames[static_cast<int>(backend)]; }

bool parse_backend(std::string_view text, Backend& out) {
  for (std::size_t i = 0; i < std::size(kBackendNames); ++i)
    if (text == kBackendNames[i]) {
      out = static_cast<Backend>(i);
      return true;
    }
  return false;
}

#ifdef STARLING_HAVE_ONEDNN
bool backend_available(Backend) { return true; }

void gemm(Backend backend, const GemmArgs& args) {
  if (args.m <= 0 || args.n <= 0) return;
  detail::check_sgd_epilogue(args);
  if (backend == Backend::native) native::gemm(args);
  else if (args.velocity) detail::gemm_then_sgd(args, onednn::gemm);
  else onednn::gemm(args);
}

void set_threads(int threads) {
  g_threads = threads < 1 ? 1 : threads;
  onednn::set_threads(g_threads);
}

std::string backend_isa(Backend backend) {
  if (backend == Backend::onednn) return onednn::effective_isa();
  return std::string(platform::isa_name(platform::active_isa()));
}
#else
bool backend_available(Backend backend) { return backend == Backend::native; }

void gemm(Backend backend, const GemmArgs& args) {
  if (backend != Backend::native)
    throw std::invalid_argument("kernels: this build has no oneDNN backend (configured with -DSTARLING_ONEDNN=OFF)");
  if (args.m <= 0 || args.n <= 0) return;
  detail::check_sgd_epilogue(args);
  native::gemm(args);
}

void set_threads(int threads) { g_threads = threads < 1 ? 1 : threads; }

std::string backend_isa(Backend backend) {
  if (backend != Backend::native)
    throw std::invalid_argument("kernels: this build has no oneDNN backend (configured with -DSTARLING_ONEDNN=OFF)");
  return std::string(platform::isa_name(platform::active_isa()));
}
#endif

int threads() { return g_threads; }

}  // namespace starling::kernels
