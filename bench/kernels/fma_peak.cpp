// Times the per-ISA FMA loops and turns them into a peak GFLOP/s figure (best of a few) and
// the FMA slots a vector store costs.
#include "fma_peak.h"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace starling::bench {
namespace {

// Seconds by wall time, or by the calling thread's CPU time.
double seconds_now(bool cpu_time) {
  if (!cpu_time) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The fastest of a few runs of `iterations`, in seconds.
template <class Loop>
double fastest(Loop&& loop, long iterations, bool cpu_time = false) {
  double best = 1e30;
  for (int trial = 0; trial < 5; ++trial) {
    const double t0 = seconds_now(cpu_time);
    loop(iterations);
    best = std::min(best, seconds_now(cpu_time) - t0);
  }
  return best;
}

// The FMA loop of `isa`, or null where it has none (scalar, and every path off x86-64).
using FmaLoop = double (*)(long, float*);
FmaLoop loop_for(platform::Isa isa) {
#if defined(__x86_64__)
  if (isa == platform::Isa::avx512) return fma_loop_avx512;
  if (isa == platform::Isa::avx2) return fma_loop_avx2;
#endif
  (void)isa;
  return nullptr;
}

}  // namespace

double fma_peak_gflops(platform::Isa isa, bool cpu_time) {
  const FmaLoop loop = loop_for(isa);
  if (!loop) return 0.0;
  loop(1 << 20, nullptr);  // warm up clocks
  double flops = 0.0;
  const double seconds = fastest([&](long n) { flops = loop(n, nullptr); }, 20 << 20, cpu_time);
  return flops / seconds * 1e-9;
}

double vector_store_slots(platform::Isa isa) {
  const FmaLoop loop = loop_for(isa);
  if (!loop) return 0.0;
  alignas(64) static float buffer[48 * 16];
  constexpr long kIterations = 4 << 20;
  loop(1 << 20, nullptr);  // warm up clocks
  const double plain = fastest([&](long n) { loop(n, nullptr); }, kIterations);
  const double storing = fastest([&](long n) { loop(n, buffer); }, kIterations);
  // Per iteration: 12 FMAs, and 6 stores in the storing loop.
  return std::max(0.0, (storing - plain) / 6.0 / (plain / 12.0));
}

}  // namespace starling::bench
