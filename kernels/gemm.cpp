#include "kernels/gemm.h"

#include "kernels/native/gemm_native.h"
#include "kernels/onednn/gemm_onednn.h"

#include <atomic>

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

void gemm(Backend backend, const GemmArgs& args) {
  if (args.m <= 0 || args.n <= 0) return;
  if (backend == Backend::onednn) onednn::gemm(args);
  else native::gemm(args);
}

void set_threads(int threads) {
  g_threads = threads < 1 ? 1 : threads;
  onednn::set_threads(g_threads);
}

int threads() { return g_threads; }

}  // namespace starling::kernels
