// CRC-32C: slicing-by-8 table fallback and the run-time choice of the SSE4.2 or the
// carry-less multiplication path.
#include "protocols/crc32c.h"

#include <array>
#include <cstring>

namespace starling::protocols {

// Defined in crc32c_sse42.cpp (compiled with -msse4.2, called only when the CPU has it).
std::uint32_t crc32c_sse42(const void* data, std::size_t size, std::uint32_t previous);
// Defined in crc32c_clmul.cpp (AVX-512 with VPCLMULQDQ, called only when the CPU has them).
std::uint32_t crc32c_clmul(const void* data, std::size_t size, std::uint32_t previous);

namespace {

constexpr std::uint32_t kPoly = 0x82F63B78u;

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? kPoly : 0u);
    t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i)
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}

constexpr Tables kTables = make_tables();

bool probe_sse42() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

bool probe_clmul() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq");
#else
  return false;
#endif
}

}  // namespace

std::uint32_t crc32c_table(const void* data, std::size_t size, std::uint32_t previous) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::uint32_t c = ~previous;
  for (; size >= 8; size -= 8, p += 8) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
        kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
  }
  for (; size > 0; --size, ++p) c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xFF];
  return ~c;
}

bool crc32c_hardware() {
  static const bool has = probe_sse42();
  return has;
}

bool crc32c_folding() {
  static const bool has = probe_clmul();
  return has;
}

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t previous) {
#if defined(__x86_64__)
  if (crc32c_folding()) return crc32c_clmul(data, size, previous);
  if (crc32c_hardware()) return crc32c_sse42(data, size, previous);
#endif
  return crc32c_table(data, size, previous);
}

}  // namespace starling::protocols
