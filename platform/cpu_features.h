#pragma once
// Which SIMD instruction set the vectorized kernels, codecs and CRC-32C use. Detected once
// at run time; STARLING_ISA=scalar|avx2|avx512|neon forces a path (tests and benchmarks), and
// a forced path the CPU cannot run falls back to the best one it can.
#include <string_view>

namespace starling::platform {

/// The paths of each architecture, ordered: each level includes the ones below it.
/// x86-64: scalar is the baseline (SSE2); avx2 adds AVX2, FMA, F16C, POPCNT and SSE4.2;
/// avx512 adds AVX-512 F, BW, DQ and VL. AArch64: scalar is the portable code as the baseline
/// compiles it (which may use NEON); neon is the hand-written NEON kernels, which every
/// AArch64 CPU runs. The other architecture's paths rank above this one's, so they are never
/// detected and forcing one falls back to the best path the CPU has.
#if defined(__aarch64__)
enum class Isa { scalar = 0, neon = 1, avx2 = 2, avx512 = 3 };
#else
enum class Isa { scalar = 0, avx2 = 1, avx512 = 2, neon = 3 };
#endif

/// The best path this CPU supports.
Isa detected_isa();

/// The path in use: STARLING_ISA if set and supported, else detected_isa().
Isa active_isa();

/// Overrides the active path for the rest of the process (tests); clamps to detected_isa().
void force_isa(Isa isa);

std::string_view isa_name(Isa isa);

/// Parses "scalar", "avx2", "avx512" or "neon"; returns false on anything else.
bool parse_isa(std::string_view text, Isa& out);

/// Whether the CPU has VPCLMULQDQ (carry-less multiplication of AVX-512 vectors), which
/// the avx512 level does not imply.
bool has_vpclmulqdq();

/// Whether the CPU has the Armv8 crc32c instructions (optional before Armv8.1), and PMULL
/// (64-bit carry-less multiplication), which the neon level does not imply.
bool has_crc32();
bool has_pmull();

/// Whether the CPU has SVE (AArch64's scalable vectors), a later path: no kernel uses it yet.
bool has_sve();

}  // namespace starling::platform
