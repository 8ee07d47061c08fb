#pragma once
// Measured single-core fp32 FMA peak of the running machine, for "% of peak" columns.
#include "platform/cpu_features.h"

namespace starling::bench {

/// GFLOP/s of a register-only FMA loop with enough independent chains to hide latency,
/// using the vector width of `isa` (scalar: the AVX2 figure is not claimed; returns 0).
double fma_peak_gflops(platform::Isa isa);

// Per-ISA loops; each returns the flops done, run for about `seconds`.
double fma_loop_avx2(long iterations);
double fma_loop_avx512(long iterations);

}  // namespace starling::bench
