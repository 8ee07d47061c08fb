#pragma once
// Measured single-core fp32 FMA peak of the running machine, for "% of peak" columns.
#include "platform/cpu_features.h"

namespace starling::bench {

/// GFLOP/s of a register-only FMA loop with enough independent chains to hide latency,
/// using the vector width of `isa` (0 for scalar, and for every path off x86-64: no loop).
/// With cpu_time, timed by the thread's CPU time (to set against parts timed the same way).
double fma_peak_gflops(platform::Isa isa, bool cpu_time = false);

/// FMA issue slots that one vector store of `isa`'s width (to L1) takes from a loop of
/// independent FMAs, 0 where the core overlaps the two: the slowdown of the FMA loop when it
/// also stores half its chains each iteration, per store (0 for scalar).
double vector_store_slots(platform::Isa isa);

// Per-ISA loops of `iterations` × 12 FMAs; each returns the flops done. With `stores` (a
// buffer of 48 aligned vectors), 6 of the 12 results are stored there each iteration too.
double fma_loop_avx2(long iterations, float* stores = nullptr);
double fma_loop_avx512(long iterations, float* stores = nullptr);

}  // namespace starling::bench
