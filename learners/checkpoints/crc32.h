#pragma once
// CRC-32 (zlib's polynomial) over any length: the checksum of packed datasets and checkpoints.
#include <cstddef>
#include <cstdint>

namespace starling {

/// Continues `crc` (0 to start) over `bytes` bytes at `data`.
uint32_t crc32_of(const void* data, std::size_t bytes, uint32_t crc = 0);

}  // namespace starling
