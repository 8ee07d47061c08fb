#include "learners/checkpoints/crc32.h"

#include <zlib.h>

namespace starling {

uint32_t crc32_of(const void* data, std::size_t bytes, uint32_t crc) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong c = crc;
  while (bytes > 0) {  // zlib takes at most a uInt per call
    const uInt chunk = bytes > (1u << 30) ? (1u << 30) : static_cast<uInt>(bytes);
    c = crc32(c, p, chunk);
    p += chunk;
    bytes -= chunk;
  }
  return static_cast<uint32_t>(c);
}

}  // namespace starling
