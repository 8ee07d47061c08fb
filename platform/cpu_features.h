#pragma once
// Which SIMD instruction set the vectorized kernels, codecs and CRC-32C use. Detected once
// at run time; STARLING_ISA=scalar|avx2|avx512 forces a path (tests and benchmarks), and a
// forced path the CPU cannot run falls back to the best one it can.
#include <string_view>

namespace starling::platform {

/// scalar: baseline x86-64 (SSE2). avx2: AVX2, FMA, F16C, POPCNT and SSE4.2. avx512: that
/// and AVX-512 F, BW, DQ and VL. Ordered: each level includes the ones below it.
enum class Isa { scalar = 0, avx2 = 1, avx512 = 2 };

/// The best path this CPU supports.
Isa detected_isa();

/// The path in use: STARLING_ISA if set and supported, else detected_isa().
Isa active_isa();

/// Overrides the active path for the rest of the process (tests); clamps to detected_isa().
void force_isa(Isa isa);

std::string_view isa_name(Isa isa);

/// Parses "scalar", "avx2" or "avx512"; returns false on anything else.
bool parse_isa(std::string_view text, Isa& out);

/// Whether the CPU has VPCLMULQDQ (carry-less multiplication of AVX-512 vectors), which
/// the avx512 level does not imply.
bool has_vpclmulqdq();

}  // namespace starling::platform
