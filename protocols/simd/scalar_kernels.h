#pragma once
// The portable reference implementations of CodecKernels. The vector tables call them for
// tails, so these are compiled without ISA flags and reachable on every CPU.
#include <cstddef>
#include <cstdint>

#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::simd::scalar {

std::uint16_t float_to_half(float f);  // round to nearest even; |f| <= 65504 expected
float half_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);  // round to nearest even; finite, clamped input expected
float bf16_to_float(std::uint16_t h);

void f32_encode(const float* v, float* r, std::uint8_t* out, std::size_t n);
void fp16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n);
void bf16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n);
bool f32_finite(const std::uint8_t* in, std::size_t n);
bool fp16_finite(const std::uint8_t* in, std::size_t n);
bool bf16_finite(const std::uint8_t* in, std::size_t n);
void f32_decode(const std::uint8_t* in, float* out, std::size_t n, bool add);
void fp16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add);
void bf16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add);
std::size_t threshold_sparse(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::int32_t* out);
std::size_t threshold_bitmap(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::uint32_t* words);
std::int64_t bitmap_check(const std::uint8_t* words, std::size_t n);
void bitmap_decode(const std::uint8_t* words, std::size_t n, float tau, float* out, bool add);
std::size_t select_abs_ge(const float* v, float* r, std::size_t begin, std::size_t end, float t,
                          std::uint32_t* idx, float* val);
float add_absmax(const float* v, float* r, std::size_t n);
void qsgd_quantize(float* r, std::size_t n, float scale, int levels, std::uint32_t key, std::uint32_t base,
                   std::int8_t* q);
bool qsgd_valid(const std::int8_t* q, std::size_t n, int levels);
void qsgd_dequant(const std::int8_t* q, std::size_t n, float step, float* out, bool add);
float add_abssum(const float* v, float* r, std::size_t n);
void sign_encode(float* r, std::size_t n, float scale, std::uint8_t* bits);
void sign_decode(const std::uint8_t* bits, std::size_t n, float scale, float* out, bool add);

/// Largest finite values of the narrow formats; encoders clamp to them so that a large
/// update saturates (the rest stays in the residual) instead of becoming infinity.
inline constexpr float kHalfMax = 65504.0f;
inline constexpr float kBf16Max = 3.38953139e38f;  // 0x7F7F0000

}  // namespace starling::protocols::simd::scalar
