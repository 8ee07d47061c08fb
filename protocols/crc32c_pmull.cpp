// CRC-32C by carry-less multiplication on arm64 (PMULL): four independent 16-byte streams
// fold the payload forward 64 bytes a step (constants: crc32c_fold.h), are folded into one
// 128-bit remainder, and the crc32c instructions finish it and the tail, as the x86 folding
// paths do. Compiled with +crc+crypto; reached only through crc32c() where the CPU has PMULL
// and the crc32c instructions.
#include <cstddef>
#include <cstdint>

#if defined(__aarch64__)
#include <arm_acle.h>
#include <arm_neon.h>

#include "protocols/crc32c_fold.h"

namespace starling::protocols {

// crc32c_armv8.cpp: the crc32c-instruction path, which takes short buffers and tails.
std::uint32_t crc32c_armv8(const void* data, std::size_t size, std::uint32_t previous);

namespace {

using namespace crc32c_fold;

constexpr std::size_t kStreams = 4, kStep = 16 * kStreams;
constexpr FoldBy kFar = fold_by(8 * kStep), k128 = fold_by(128);

poly64x2_t constants(FoldBy k) {
  const std::uint64_t lanes[2] = {k.lo, k.hi};
  return vreinterpretq_p64_u64(vld1q_u64(lanes));
}

uint64x2_t load(const std::uint8_t* p) { return vreinterpretq_u64_u8(vld1q_u8(p)); }

// x folded forward by the distance k encodes, onto next: lo64(x)·k.lo ⊕ hi64(x)·k.hi ⊕ next.
uint64x2_t fold(uint64x2_t x, poly64x2_t k, uint64x2_t next) {
  const poly64x2_t px = vreinterpretq_p64_u64(x);
  const uint64x2_t lo = vreinterpretq_u64_p128(vmull_p64(vgetq_lane_p64(px, 0), vgetq_lane_p64(k, 0)));
  const uint64x2_t hi = vreinterpretq_u64_p128(vmull_high_p64(px, k));
  return veorq_u64(veorq_u64(lo, hi), next);
}

}  // namespace

std::uint32_t crc32c_pmull(const void* data, std::size_t size, std::uint32_t previous) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (size < 2 * kStep) return crc32c_armv8(p, size, previous);
  uint64x2_t x[kStreams];
  for (std::size_t s = 0; s < kStreams; ++s) x[s] = load(p + 16 * s);
  // The running CRC enters as an XOR into the first four bytes (reflected CRC).
  x[0] = veorq_u64(x[0], vsetq_lane_u64(static_cast<std::uint32_t>(~previous), vdupq_n_u64(0), 0));
  p += kStep, size -= kStep;
  const poly64x2_t far = constants(kFar), near = constants(k128);
  for (; size >= kStep; p += kStep, size -= kStep)
    for (std::size_t s = 0; s < kStreams; ++s) x[s] = fold(x[s], far, load(p + 16 * s));
  uint64x2_t r = x[0];
  for (std::size_t s = 1; s < kStreams; ++s) r = fold(r, near, x[s]);
  for (; size >= 16; p += 16, size -= 16) r = fold(r, near, load(p));
  // r's CRC from zero is the CRC so far: the crc32c instruction takes it, then the tail.
  const std::uint32_t c = __crc32cd(__crc32cd(0, vgetq_lane_u64(r, 0)), vgetq_lane_u64(r, 1));
  return crc32c_armv8(p, size, ~c);
}

}  // namespace starling::protocols
#endif
