// Times the per-ISA FMA loops and turns them into a peak GFLOP/s figure (best of a few).
#include "fma_peak.h"

#include <algorithm>
#include <chrono>

namespace starling::bench {

double fma_peak_gflops(platform::Isa isa) {
  if (isa == platform::Isa::scalar) return 0.0;
  auto loop = isa == platform::Isa::avx512 ? fma_loop_avx512 : fma_loop_avx2;
  loop(1 << 20);  // warm up clocks
  double best = 0.0;
  for (int trial = 0; trial < 5; ++trial) {
    const auto t0 = std::chrono::steady_clock::now();
    const double flops = loop(20 << 20);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, flops / s * 1e-9);
  }
  return best;
}

}  // namespace starling::bench
