#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of frame payloads. Folds by
// carry-less multiplication where the CPU has VPCLMULQDQ (256-bit at the avx2 level,
// 512-bit at avx512) or PMULL (128-bit at neon), else takes the crc32 instruction (SSE4.2
// at avx2, Armv8's crc32c at neon) or a slicing-by-8 table (scalar); all give the same
// value ("123456789" -> 0xE3069283).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace starling::protocols {

/// CRC-32C of [data, data + size), continuing from a previous crc32c() result (0 to start).
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t previous = 0);

/// The table implementation, always available (tests compare it to the hardware path).
std::uint32_t crc32c_table(const void* data, std::size_t size, std::uint32_t previous = 0);

using Crc32cFn = std::uint32_t (*)(const void* data, std::size_t size, std::uint32_t previous);

/// One implementation, named ("table", "sse42", "vpclmul256", "vpclmul512", "armv8-crc32",
/// "pmull").
struct Crc32cPath {
  const char* name;
  Crc32cFn fn;
};

/// Every implementation this CPU can run, the table first, whatever the active ISA: tests
/// compare each with the table, and benchmarks time them.
std::vector<Crc32cPath> crc32c_paths();

/// The name of the implementation crc32c() takes at the active ISA (benchmarks print it).
const char* crc32c_active();

}  // namespace starling::protocols
