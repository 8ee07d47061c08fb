#pragma once
// The one ISA-dispatch pattern: a routine with per-ISA implementations (GEMM, the ops and
// codec kernel tables, CRC-32C) names them once and each call takes the one the active ISA
// allows, so STARLING_ISA and force_isa reach every vectorized path the same way.
#include "platform/cpu_features.h"

// An entry whose file is built only for its architecture (CMake's STARLING_X86_64 and
// STARLING_ARM64): the entry there and null elsewhere, so that one IsaDispatch definition
// names the entries of both architectures.
#if defined(__x86_64__)
#define STARLING_X86_64_ONLY(entry) entry
#else
#define STARLING_X86_64_ONLY(entry) nullptr
#endif
#if defined(__aarch64__)
#define STARLING_ARM64_ONLY(entry) entry
#else
#define STARLING_ARM64_ONLY(entry) nullptr
#endif

namespace starling::platform {

/// One routine's implementations per ISA: T is a function pointer or a pointer to a table
/// of them, and an entry may be null where that ISA has none; the entries of the other
/// architecture's paths are null. get() returns the entry of the best ISA at or below
/// active_isa() that has one, or null when none does. The fallbacks are settled at
/// construction, so a call costs one array load. An entry built with ISA flags must be
/// reached only through get(), which never exceeds detected_isa().
template <class T>
class IsaDispatch {
 public:
#if defined(__aarch64__)
  constexpr IsaDispatch(T scalar, T /*avx2*/, T /*avx512*/, T neon = nullptr)
      : best_{scalar, neon ? neon : scalar, neon ? neon : scalar} {}
#else
  constexpr IsaDispatch(T scalar, T avx2, T avx512, T /*neon*/ = nullptr)
      : best_{scalar, avx2 ? avx2 : scalar, avx512 ? avx512 : avx2 ? avx2 : scalar} {}
#endif

  T get() const { return best_[static_cast<int>(active_isa())]; }

 private:
  T best_[3];
};

}  // namespace starling::platform
