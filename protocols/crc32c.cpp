// CRC-32C: slicing-by-8 table (scalar); at the avx2 level 256-bit carry-less folding where
// the CPU has VPCLMULQDQ, else the crc32 instruction; at avx512 512-bit folding where the
// CPU has VPCLMULQDQ; at neon 128-bit PMULL folding where the CPU has PMULL and the crc32c
// instructions, else those instructions. Picked through platform::IsaDispatch.
#include "protocols/crc32c.h"

#include "platform/isa_dispatch.h"

#include <array>
#include <cstring>

namespace starling::protocols {

// Defined in crc32c_sse42.cpp (compiled with -msse4.2, which every avx2-level CPU has).
std::uint32_t crc32c_sse42(const void* data, std::size_t size, std::uint32_t previous);
// Defined in crc32c_clmul.cpp (AVX-512 with VPCLMULQDQ, called only when the CPU has them).
std::uint32_t crc32c_clmul(const void* data, std::size_t size, std::uint32_t previous);
// Defined in crc32c_vpclmul256.cpp (AVX2 with VPCLMULQDQ, called only when the CPU has them).
std::uint32_t crc32c_vpclmul256(const void* data, std::size_t size, std::uint32_t previous);
// Defined in crc32c_armv8.cpp (the crc32c instructions, called only when the CPU has them).
std::uint32_t crc32c_armv8(const void* data, std::size_t size, std::uint32_t previous);
// Defined in crc32c_pmull.cpp (PMULL and the crc32c instructions, likewise).
std::uint32_t crc32c_pmull(const void* data, std::size_t size, std::uint32_t previous);

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

namespace {

#if defined(__x86_64__)
// The fastest avx2-level path this CPU has.
Crc32cFn best_avx2() {
  if (platform::detected_isa() < platform::Isa::avx2) return nullptr;
  return platform::has_vpclmulqdq() ? crc32c_vpclmul256 : crc32c_sse42;
}
#elif defined(__aarch64__)
// The fastest neon-level path this CPU has (none without the crc32c instructions, which
// Armv8.0 leaves optional).
Crc32cFn best_neon() {
  if (!platform::has_crc32()) return nullptr;
  return platform::has_pmull() ? crc32c_pmull : crc32c_armv8;
}
#endif

// Built at first use: the folding paths need carry-less multiplication beyond the levels.
const platform::IsaDispatch<Crc32cFn>& implementations() {
#if defined(__x86_64__)
  static const platform::IsaDispatch<Crc32cFn> d{crc32c_table, best_avx2(),
                                                 platform::has_vpclmulqdq() ? crc32c_clmul : nullptr};
#elif defined(__aarch64__)
  static const platform::IsaDispatch<Crc32cFn> d{crc32c_table, nullptr, nullptr, best_neon()};
#else
  static const platform::IsaDispatch<Crc32cFn> d{crc32c_table, nullptr, nullptr};
#endif
  return d;
}

}  // namespace

std::vector<Crc32cPath> crc32c_paths() {
  std::vector<Crc32cPath> paths{{"table", crc32c_table}};
#if defined(__x86_64__)
  const platform::Isa isa = platform::detected_isa();
  if (isa >= platform::Isa::avx2) {
    paths.push_back({"sse42", crc32c_sse42});
    if (platform::has_vpclmulqdq()) paths.push_back({"vpclmul256", crc32c_vpclmul256});
  }
  if (isa >= platform::Isa::avx512 && platform::has_vpclmulqdq()) paths.push_back({"vpclmul512", crc32c_clmul});
#elif defined(__aarch64__)
  if (platform::has_crc32()) {
    paths.push_back({"armv8-crc32", crc32c_armv8});
    if (platform::has_pmull()) paths.push_back({"pmull", crc32c_pmull});
  }
#endif
  return paths;
}

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t previous) {
  return implementations().get()(data, size, previous);
}

const char* crc32c_active() {
  const Crc32cFn active = implementations().get();
  for (const Crc32cPath& path : crc32c_paths())
    if (path.fn == active) return path.name;
  return "table";
}

}  // namespace starling::protocols
