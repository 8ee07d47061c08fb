// CRC-32C by carry-less multiplication (AVX-512 VPCLMULQDQ): the payload is folded 256
// bytes at a time into four 512-bit accumulators, which are then folded into one 128-bit
// remainder that the crc32 instruction finishes (the fold constants: crc32c_fold.h). Four
// independent folds keep the carry-less multipliers busy where the crc32 instruction is one
// serial chain. Compiled with AVX-512 and VPCLMULQDQ flags; reached only through crc32c()
// when the CPU has them.
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#include "protocols/crc32c_fold.h"

namespace starling::protocols {
namespace {

using namespace crc32c_fold;

constexpr FoldBy k2048 = fold_by(2048), k512 = fold_by(512);
constexpr FoldBy k384 = fold_by(384), k256 = fold_by(256), k128 = fold_by(128);

__m512i broadcast(FoldBy k) {
  const auto lo = static_cast<long long>(k.lo), hi = static_cast<long long>(k.hi);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

// Each 128-bit lane of x folded forward onto the matching lane of next.
__m512i fold(__m512i x, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), next,
                                   0x96);  // a ^ b ^ c
}

// The four lanes of x (16 bytes each, oldest first) folded into the last one.
__m128i fold_lanes(__m512i x) {
  alignas(64) __m128i lane[4];
  _mm512_store_si512(lane, x);
  const __m128i a = fold128(lane[0], constants128(k384)), b = fold128(lane[1], constants128(k256));
  const __m128i c = fold128(lane[2], constants128(k128));
  return _mm_ternarylogic_epi64(_mm_xor_si128(a, b), c, lane[3], 0x96);
}

}  // namespace

std::uint32_t crc32c_clmul(const void* data, std::size_t size, std::uint32_t previous) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (size < 256) return crc32c_sse42(p, size, previous);
  // The running CRC enters as an XOR into the first four bytes (reflected CRC).
  const __m512i first = _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, static_cast<long long>(~previous));
  __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p), first);
  __m512i x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
  p += 256, size -= 256;
  const __m512i far = broadcast(k2048), near = broadcast(k512);
  for (; size >= 256; p += 256, size -= 256) {
    x0 = fold(x0, far, _mm512_loadu_si512(p));
    x1 = fold(x1, far, _mm512_loadu_si512(p + 64));
    x2 = fold(x2, far, _mm512_loadu_si512(p + 128));
    x3 = fold(x3, far, _mm512_loadu_si512(p + 192));
  }
  __m512i x = fold(fold(fold(x0, near, x1), near, x2), near, x3);
  for (; size >= 64; p += 64, size -= 64) x = fold(x, near, _mm512_loadu_si512(p));
  return finish(fold_lanes(x), p, size);
}

}  // namespace starling::protocols
#endif
