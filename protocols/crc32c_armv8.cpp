// CRC-32C with the Armv8 crc32c instructions, eight bytes a step: the arm64 path where the
// CPU has them but no PMULL, and the tails of the folding path (crc32c_pmull.cpp).
// Compiled with +crc and reached only through crc32c() where the CPU has the instructions.
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__aarch64__)
#include <arm_acle.h>

namespace starling::protocols {

std::uint32_t crc32c_armv8(const void* data, std::size_t size, std::uint32_t previous) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::uint32_t c = ~previous;
  for (; size >= 8; size -= 8, p += 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = __crc32cd(c, v);
  }
  for (; size > 0; --size, ++p) c = __crc32cb(c, *p);
  return ~c;
}

}  // namespace starling::protocols
#endif
