#pragma once
// The one ISA-dispatch pattern: a routine with per-ISA implementations (GEMM, the ops and
// codec kernel tables, CRC-32C) names them once and each call takes the one the active ISA
// allows, so STARLING_ISA and force_isa reach every vectorized path the same way.
#include "platform/cpu_features.h"

namespace starling::platform {

/// One routine's implementations per ISA: T is a function pointer or a pointer to a table
/// of them, and an entry may be null where that ISA has none. get() returns the entry of
/// the best ISA at or below active_isa() that has one, or null when none does. The
/// fallbacks are settled at construction, so a call costs one array load. An entry built
/// with ISA flags must be reached only through get(), which never exceeds detected_isa().
template <class T>
class IsaDispatch {
 public:
  constexpr IsaDispatch(T scalar, T avx2, T avx512)
      : best_{scalar, avx2 ? avx2 : scalar, avx512 ? avx512 : avx2 ? avx2 : scalar} {}

  T get() const { return best_[static_cast<int>(active_isa())]; }

 private:
  T best_[3];
};

}  // namespace starling::platform
