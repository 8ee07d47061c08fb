#pragma once
// What the CRC-32C folding paths share (crc32c_clmul.cpp for AVX-512,
// crc32c_vpclmul256.cpp for the avx2 level): the fold constants, the 128-bit fold and the
// finish. A fold moves 16 bytes A forward by D bits: A·x^D ≡ lo64(A)·k(D+32) ⊕
// hi64(A)·k(D−32) (mod P), with k(e) = reflect32(x^e mod P) << 1 in the reflected bit
// order the crc32 instruction uses. The vector helpers have internal linkage on purpose:
// each ISA file compiles its own copy with its own flags, which the linker must not merge.
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && defined(__PCLMUL__) && defined(__SSE4_2__)
#include <immintrin.h>
#endif

namespace starling::protocols::crc32c_fold {

// x^e mod P in the normal bit order, P = x^32 + 0x1EDC6F41 (Castagnoli).
constexpr std::uint32_t x_power_mod(int e) {
  std::uint32_t r = 1;
  for (int i = 0; i < e; ++i) r = (r << 1) ^ ((r & 0x80000000u) ? 0x1EDC6F41u : 0u);
  return r;
}

constexpr std::uint64_t fold_constant(int e) {
  const std::uint32_t r = x_power_mod(e);
  std::uint32_t reflected = 0;
  for (int i = 0; i < 32; ++i)
    if ((r >> i) & 1u) reflected |= 1u << (31 - i);
  return static_cast<std::uint64_t>(reflected) << 1;
}

// The pair that folds 16 bytes forward by `bits`, for the low and the high 64 bits.
struct FoldBy {
  std::uint64_t lo, hi;
};
constexpr FoldBy fold_by(int bits) { return {fold_constant(bits + 32), fold_constant(bits - 32)}; }

}  // namespace starling::protocols::crc32c_fold

#if defined(__x86_64__) && defined(__PCLMUL__) && defined(__SSE4_2__)
namespace starling::protocols {

// crc32c_sse42.cpp: the crc32-instruction path, which takes short buffers and tails.
std::uint32_t crc32c_sse42(const void* data, std::size_t size, std::uint32_t previous);

namespace crc32c_fold {
namespace {

__m128i constants128(FoldBy k) { return _mm_set_epi64x(static_cast<long long>(k.hi), static_cast<long long>(k.lo)); }

// x folded forward by the distance k encodes (XOR it onto the 16 bytes that far on).
__m128i fold128(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

// r: 16 bytes whose CRC from zero is the CRC so far, which the crc32 instruction takes;
// then the size bytes at p that no fold reached.
std::uint32_t finish(__m128i r, const std::uint8_t* p, std::size_t size) {
  std::uint64_t c = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(r)));
  c = _mm_crc32_u64(c, static_cast<std::uint64_t>(_mm_extract_epi64(r, 1)));
  return crc32c_sse42(p, size, ~static_cast<std::uint32_t>(c));
}

}  // namespace
}  // namespace crc32c_fold
}  // namespace starling::protocols
#endif
