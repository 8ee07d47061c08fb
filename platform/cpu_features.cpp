// CPU feature probe and the active-ISA switch (platform/cpu_features.h).
#include "platform/cpu_features.h"

#include <atomic>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace starling::platform {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// Clang's __builtin_cpu_supports does not know "f16c"; CPUID leaf 1 has it in ECX.
bool has_f16c() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

Isa probe() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c() &&
                    __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("sse4.2");
  if (!avx2) return Isa::scalar;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return Isa::avx512;
  return Isa::avx2;
#elif defined(__aarch64__)
  return Isa::neon;  // Advanced SIMD is part of every AArch64 CPU
#else
  return Isa::scalar;
#endif
}

Isa clamp(Isa wanted) { return static_cast<int>(wanted) <= static_cast<int>(detected_isa()) ? wanted : detected_isa(); }

Isa initial() {
  Isa isa = detected_isa();
  if (const char* env = std::getenv("STARLING_ISA")) {
    Isa forced;
    if (parse_isa(env, forced)) isa = clamp(forced);
  }
  return isa;
}

std::atomic<Isa>& active() {
  static std::atomic<Isa> isa{initial()};
  return isa;
}

}  // namespace

Isa detected_isa() {
  static const Isa isa = probe();
  return isa;
}

Isa active_isa() { return active().load(std::memory_order_relaxed); }

void force_isa(Isa isa) { active().store(clamp(isa), std::memory_order_relaxed); }

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    case Isa::neon: return "neon";
    case Isa::scalar: break;
  }
  return "scalar";
}

bool parse_isa(std::string_view text, Isa& out) {
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon}) {
    if (text == isa_name(isa)) {
      out = isa;
      return true;
    }
  }
  return false;
}

bool has_vpclmulqdq() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("vpclmulqdq");
#else
  return false;
#endif
}

#if defined(__aarch64__) && defined(__linux__)
bool has_crc32() { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
bool has_pmull() { return (getauxval(AT_HWCAP) & HWCAP_PMULL) != 0; }
bool has_sve() { return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0; }
#else
bool has_crc32() { return false; }
bool has_pmull() { return false; }
bool has_sve() { return false; }
#endif

}  // namespace starling::platform
