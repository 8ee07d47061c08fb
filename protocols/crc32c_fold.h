#pragma once
// The carry-less-multiplication fold constants every CRC-32C folding path shares
// (crc32c_clmul.cpp for AVX-512, crc32c_vpclmul256.cpp for the avx2 level). A fold moves 16
// bytes A forward by D bits: A·x^D ≡ lo64(A)·k(D+32) ⊕ hi64(A)·k(D−32) (mod P), with
// k(e) = reflect32(x^e mod P) << 1 in the reflected bit order the crc32 instruction uses.
#include <cstdint>

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
