#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of frame payloads. Folds by
// carry-less multiplication (AVX-512 VPCLMULQDQ) when the active ISA is avx512 and the CPU
// has it, uses the SSE4.2 crc32 instruction at avx2, else a slicing-by-8 table; all give
// the same value ("123456789" -> 0xE3069283).
#include <cstddef>
#include <cstdint>

namespace starling::protocols {

/// CRC-32C of [data, data + size), continuing from a previous crc32c() result (0 to start).
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t previous = 0);

/// The table implementation, always available (tests compare it to the hardware path).
std::uint32_t crc32c_table(const void* data, std::size_t size, std::uint32_t previous = 0);

}  // namespace starling::protocols
