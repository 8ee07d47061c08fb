#pragma once
// Which SIMD instruction set the vectorized kernels and codecs use. Detected once at run
// time; STARLING_ISA=scalar|avx2|avx512 forces a path (tests and benchmarks), and a forced
// path the CPU cannot run falls back to the best one it can.
#include <string_view>

namespace starling::kernels {

enum class Isa { scalar = 0, avx2 = 1, avx512 = 2 };

/// The best path this CPU supports (avx2 means AVX2+FMA+F16C; avx512 means F+BW+DQ+VL).
Isa detected_isa();

/// The path in use: STARLING_ISA if set and supported, else detected_isa().
Isa active_isa();

/// Overrides the active path for the rest of the process (tests); clamps to detected_isa().
void force_isa(Isa isa);

std::string_view isa_name(Isa isa);

/// Parses "scalar", "avx2" or "avx512"; returns false on anything else.
bool parse_isa(std::string_view text, Isa& out);

}  // namespace starling::kernels
