#pragma once
// The inner loops of the codecs, one table per instruction set (scalar, AVX2, AVX-512, NEON),
// chosen at run time through platform::IsaDispatch. Every entry takes raw pointers the
// calling codec has already bounds-checked; wire bytes may be unaligned. All paths give
// bit-identical results except the float sums (add_abssum), whose order differs.
#include <cstddef>
#include <cstdint>

namespace starling::protocols::simd {

struct CodecKernels {
  // Dense. encode: t = v + r; out = wire(t); r = t - decoded(out). decode: out (+)= value.
  void (*f32_encode)(const float* v, float* r, std::uint8_t* out, std::size_t n);
  void (*fp16_encode)(const float* v, float* r, std::uint8_t* out, std::size_t n);
  void (*bf16_encode)(const float* v, float* r, std::uint8_t* out, std::size_t n);
  bool (*f32_finite)(const std::uint8_t* in, std::size_t n);
  bool (*fp16_finite)(const std::uint8_t* in, std::size_t n);
  bool (*bf16_finite)(const std::uint8_t* in, std::size_t n);
  void (*f32_decode)(const std::uint8_t* in, float* out, std::size_t n, bool add);
  void (*fp16_decode)(const std::uint8_t* in, float* out, std::size_t n, bool add);
  void (*bf16_decode)(const std::uint8_t* in, float* out, std::size_t n, bool add);

  // Threshold over elements [begin, end): r += v; entries with |r| >= tau send sign·tau
  // and subtract it; clip > 0 then clamps r to ±clip. Sparse writes ±(i+1) and may store
  // up to 16 entries past the returned count; bitmap (begin % 16 == 0) writes 2-bit codes
  // (01 = +tau, 10 = -tau) into words[begin/16 ...], zero-padding the last word.
  std::size_t (*threshold_sparse)(const float* v, float* r, std::size_t begin, std::size_t end,
                                  float tau, float clip, std::int32_t* out);
  std::size_t (*threshold_bitmap)(const float* v, float* r, std::size_t begin, std::size_t end,
                                   float tau, float clip, std::uint32_t* words);
  /// Nonzero codes in a 2-bit bitmap of n entries, or -1 if a code 11 or a padding bit is set.
  std::int64_t (*bitmap_check)(const std::uint8_t* words, std::size_t n);
  void (*bitmap_decode)(const std::uint8_t* words, std::size_t n, float tau, float* out, bool add);

  // Top-k over [begin, end): r += v; entries with |r| >= t go to idx/val and r becomes 0
  // there. May store up to 16 entries past the returned count.
  std::size_t (*select_abs_ge)(const float* v, float* r, std::size_t begin, std::size_t end, float t,
                               std::uint32_t* idx, float* val);

  // QSGD, one bucket: r += v, returning max |r|; then stochastic levels in [-levels, levels]
  // from hash(key, base + i) and r -= level · scale / levels.
  float (*add_absmax)(const float* v, float* r, std::size_t n);
  void (*qsgd_quantize)(float* r, std::size_t n, float scale, int levels, std::uint32_t key,
                        std::uint32_t base, std::int8_t* q);
  bool (*qsgd_valid)(const std::int8_t* q, std::size_t n, int levels);
  void (*qsgd_dequant)(const std::int8_t* q, std::size_t n, float step, float* out, bool add);

  // Sign, one bucket: r += v, returning Σ|r|; then bit i = (r_i < 0), r -= ±scale.
  // Bits are LSB-first; the bucket starts on a byte boundary.
  float (*add_abssum)(const float* v, float* r, std::size_t n);
  void (*sign_encode)(float* r, std::size_t n, float scale, std::uint8_t* bits);
  void (*sign_decode)(const std::uint8_t* bits, std::size_t n, float scale, float* out, bool add);
};

/// The table for the active ISA (platform::active_isa(), re-read on every call).
const CodecKernels& codec_kernels();

/// The uniform variate QSGD rounds with: hash of (key, index) -> [0, 1) in 2^-24 steps.
inline std::uint32_t qsgd_hash(std::uint32_t key, std::uint32_t index) {
  std::uint32_t x = (index * 0x9E3779B1u) ^ key;
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

}  // namespace starling::protocols::simd
