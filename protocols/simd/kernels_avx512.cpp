// AVX-512 (F/BW/DQ/VL + F16C) codec kernels. Compiled with per-file ISA flags and reached
// only through codec_kernels() when the CPU has AVX-512; tails go to the scalar kernels.
// Compress writes go to a register and then a full unaligned store (a compress straight
// to memory is microcoded and slow on AMD Zen 4).
// GCC 12 flags _mm512_undefined_*() inside its own headers as uninitialized; not ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <cstring>

#include "protocols/simd/scalar_kernels.h"

namespace starling::protocols::simd {
namespace {

namespace ref = scalar;

// A function, not a constant: a namespace-scope vector would run AVX-512 code at load time.
__m512i iota() { return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }

__m512 clamp(__m512 x, float limit) {
  return _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-limit)), _mm512_set1_ps(limit));
}

__m512 base_for(const float* out, bool add) { return add ? _mm512_loadu_ps(out) : _mm512_setzero_ps(); }

// 16 mask bits -> the even bits of a 32-bit word (Morton spread).
std::uint32_t spread16(std::uint32_t x) {
  x = (x | (x << 8)) & 0x00FF00FFu;
  x = (x | (x << 4)) & 0x0F0F0F0Fu;
  x = (x | (x << 2)) & 0x33333333u;
  x = (x | (x << 1)) & 0x55555555u;
  return x;
}

void f32_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 t = _mm512_add_ps(_mm512_loadu_ps(v + i), _mm512_loadu_ps(r + i));
    _mm512_storeu_ps(out + 4 * i, t);
    _mm512_storeu_ps(r + i, _mm512_setzero_ps());
  }
  ref::f32_encode(v + i, r + i, out + 4 * i, n - i);
}

void fp16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 t = _mm512_add_ps(_mm512_loadu_ps(v + i), _mm512_loadu_ps(r + i));
    __m256i h = _mm512_cvtps_ph(clamp(t, ref::kHalfMax), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), h);
    _mm512_storeu_ps(r + i, _mm512_sub_ps(t, _mm512_cvtph_ps(h)));
  }
  ref::fp16_encode(v + i, r + i, out + 2 * i, n - i);
}

void bf16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  const __m512i round = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1);
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 t = _mm512_add_ps(_mm512_loadu_ps(v + i), _mm512_loadu_ps(r + i));
    __m512i u = _mm512_castps_si512(clamp(t, ref::kBf16Max));
    u = _mm512_add_epi32(u, _mm512_add_epi32(round, _mm512_and_si512(_mm512_srli_epi32(u, 16), one)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), _mm512_cvtepi32_epi16(_mm512_srli_epi32(u, 16)));
    _mm512_storeu_ps(r + i, _mm512_sub_ps(t, _mm512_castsi512_ps(_mm512_and_si512(u, high))));
  }
  ref::bf16_encode(v + i, r + i, out + 2 * i, n - i);
}

bool f32_finite(const std::uint8_t* in, std::size_t n) {
  const __m512i exp = _mm512_set1_epi32(0x7F800000);
  __mmask16 bad = 0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_loadu_si512(in + 4 * i), exp), exp);
  return bad == 0 && ref::f32_finite(in + 4 * i, n - i);
}

bool narrow_finite(const std::uint8_t* in, std::size_t n, short exp_bits,
                   bool (*tail)(const std::uint8_t*, std::size_t)) {
  const __m512i exp = _mm512_set1_epi16(exp_bits);
  __mmask32 bad = 0;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    bad |= _mm512_cmpeq_epi16_mask(_mm512_and_si512(_mm512_loadu_si512(in + 2 * i), exp), exp);
  return bad == 0 && tail(in + 2 * i, n - i);
}

bool fp16_finite(const std::uint8_t* in, std::size_t n) { return narrow_finite(in, n, 0x7C00, ref::fp16_finite); }
bool bf16_finite(const std::uint8_t* in, std::size_t n) { return narrow_finite(in, n, 0x7F80, ref::bf16_finite); }

void f32_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, _mm512_add_ps(base_for(out + i, add), _mm512_loadu_ps(in + 4 * i)));
  ref::f32_decode(in + 4 * i, out + i, n - i, add);
}

void fp16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i)));
    _mm512_storeu_ps(out + i, _mm512_add_ps(base_for(out + i, add), x));
  }
  ref::fp16_decode(in + 2 * i, out + i, n - i, add);
}

void bf16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i)));
    __m512 x = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    _mm512_storeu_ps(out + i, _mm512_add_ps(base_for(out + i, add), x));
  }
  ref::bf16_decode(in + 2 * i, out + i, n - i, add);
}

// One 16-lane threshold step: updates r[i..i+16) and reports the +tau / -tau lanes.
struct Masks {
  __mmask16 pos, neg;
};

Masks threshold16(const float* v, float* r, std::size_t i, __m512 tau, __m512 ntau, float clip) {
  __m512 t = _mm512_add_ps(_mm512_loadu_ps(v + i), _mm512_loadu_ps(r + i));
  const __mmask16 pos = _mm512_cmp_ps_mask(t, tau, _CMP_GE_OQ);
  const __mmask16 neg = _mm512_cmp_ps_mask(t, ntau, _CMP_LE_OQ);
  t = _mm512_mask_sub_ps(t, pos, t, tau);
  t = _mm512_mask_add_ps(t, neg, t, tau);
  if (clip > 0.0f) t = clamp(t, clip);
  _mm512_storeu_ps(r + i, t);
  return {pos, neg};
}

std::size_t threshold_sparse(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::int32_t* out) {
  const __m512 vt = _mm512_set1_ps(tau), vnt = _mm512_set1_ps(-tau);
  std::size_t count = 0, i = begin;
  for (; i + 16 <= end; i += 16) {
    const Masks m = threshold16(v, r, i, vt, vnt, clip);
    const __mmask16 any = m.pos | m.neg;
    if (any == 0) continue;
    const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(i + 1)), iota());
    const __m512i signed_idx = _mm512_mask_sub_epi32(idx, m.neg, _mm512_setzero_si512(), idx);
    _mm512_storeu_si512(out + count, _mm512_maskz_compress_epi32(any, signed_idx));
    count += static_cast<std::size_t>(__builtin_popcount(any));
  }
  return count + ref::threshold_sparse(v, r, i, end, tau, clip, out + count);
}

std::size_t threshold_bitmap(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::uint32_t* words) {
  const __m512 vt = _mm512_set1_ps(tau), vnt = _mm512_set1_ps(-tau);
  std::size_t count = 0, i = begin;
  for (; i + 16 <= end; i += 16) {
    const Masks m = threshold16(v, r, i, vt, vnt, clip);
    words[i / 16] = spread16(m.pos) | (spread16(m.neg) << 1);
    count += static_cast<std::size_t>(__builtin_popcount(static_cast<std::uint32_t>(m.pos | m.neg)));
  }
  return count + ref::threshold_bitmap(v, r, i, end, tau, clip, words);
}

std::int64_t bitmap_check(const std::uint8_t* words, std::size_t n) {
  // 64-bit scalar words with the popcnt instruction are fast enough (32 entries per step).
  const std::size_t full = n / 32;
  std::uint64_t bad = 0;
  std::int64_t count = 0;
  for (std::size_t w = 0; w < full; ++w) {
    std::uint64_t x;
    std::memcpy(&x, words + 8 * w, 8);
    bad |= x & (x >> 1) & 0x5555555555555555ull;
    count += __builtin_popcountll(x);
  }
  if (bad) return -1;
  const std::int64_t rest = ref::bitmap_check(words + 8 * full, n - 32 * full);
  return rest < 0 ? -1 : count + rest;
}

void bitmap_decode(const std::uint8_t* words, std::size_t n, float tau, float* out, bool add) {
  const __m512i shifts = _mm512_slli_epi32(iota(), 1), three = _mm512_set1_epi32(3);
  const __m512i one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2);
  const __m512 vt = _mm512_set1_ps(tau), vnt = _mm512_set1_ps(-tau);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::uint32_t word;
    std::memcpy(&word, words + i / 4, 4);
    const __m512i codes = _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(static_cast<int>(word)), shifts), three);
    __m512 x = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(codes, one), vt);
    x = _mm512_mask_mov_ps(x, _mm512_cmpeq_epi32_mask(codes, two), vnt);
    _mm512_storeu_ps(out + i, _mm512_add_ps(base_for(out + i, add), x));
  }
  // The tail starts on a word boundary (i is a multiple of 16).
  ref::bitmap_decode(words + i / 4, n - i, tau, out + i, add);
}

std::size_t select_abs_ge(const float* v, float* r, std::size_t begin, std::size_t end, float t,
                          std::uint32_t* idx, float* val) {
  const __m512 vt = _mm512_set1_ps(t);
  std::size_t count = 0, i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512 x = _mm512_add_ps(_mm512_loadu_ps(v + i), _mm512_loadu_ps(r + i));
    const __mmask16 m = _mm512_cmp_ps_mask(_mm512_abs_ps(x), vt, _CMP_GE_OQ);
    _mm512_storeu_ps(r + i, _mm512_maskz_mov_ps(static_cast<__mmask16>(~m), x));
    if (m == 0) continue;
    const __m512i at = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(i)), iota());
    _mm512_storeu_si512(idx + count, _mm512_maskz_compress_epi32(m, at));
    _mm512_storeu_ps(val + count, _mm512_maskz_compress_ps(m, x));
    count += static_cast<std::size_t>(__builtin_popcount(m));
  }
  return count + ref::select_abs_ge(v, r, i, end, t, idx + count, val + count);
}

float add_absmax(const float* v, float* r, std::size_t n) {
  __m512 m = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_add_ps(_mm512_loadu_ps(v + i), _mm512_loadu_ps(r + i));
    _mm512_storeu_ps(r + i, x);
    m = _mm512_max_ps(m, _mm512_abs_ps(x));
  }
  const float head = _mm512_reduce_max_ps(m), tail = ref::add_absmax(v + i, r + i, n - i);
  return head > tail ? head : tail;
}

__m512i mix(__m512i x) {
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
  x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0x7FEB352D));
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 15));
  x = _mm512_mullo_epi32(x, _mm512_set1_epi32(static_cast<int>(0x846CA68Bu)));
  return _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
}

void qsgd_quantize(float* r, std::size_t n, float scale, int levels, std::uint32_t key, std::uint32_t base,
                   std::int8_t* q) {
  const float inv_s = scale > 0.0f ? static_cast<float>(levels) / scale : 0.0f;
  const __m512 inv = _mm512_set1_ps(inv_s), step = _mm512_set1_ps(scale / static_cast<float>(levels));
  const __m512 ulp = _mm512_set1_ps(5.9604645e-8f);
  const __m512i golden = _mm512_set1_epi32(static_cast<int>(0x9E3779B1u)), vkey = _mm512_set1_epi32(static_cast<int>(key));
  const __m512i top = _mm512_set1_epi32(levels);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i index = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(base + i)), iota());
    const __m512i h = mix(_mm512_xor_si512(_mm512_mullo_epi32(index, golden), vkey));
    const __m512 u = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(h, 8)), ulp);
    const __m512 x = _mm512_loadu_ps(r + i);
    const __m512 y = _mm512_add_ps(_mm512_mul_ps(_mm512_abs_ps(x), inv), u);
    __m512i level = _mm512_min_epi32(_mm512_cvttps_epi32(y), top);
    level = _mm512_mask_sub_epi32(level, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ),
                                  _mm512_setzero_si512(), level);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm512_cvtepi32_epi8(level));
    _mm512_storeu_ps(r + i, _mm512_sub_ps(x, _mm512_mul_ps(_mm512_cvtepi32_ps(level), step)));
  }
  ref::qsgd_quantize(r + i, n - i, scale, levels, key, base + static_cast<std::uint32_t>(i), q + i);
}

bool qsgd_valid(const std::int8_t* q, std::size_t n, int levels) {
  const __m512i hi = _mm512_set1_epi8(static_cast<char>(levels)), lo = _mm512_set1_epi8(static_cast<char>(-levels));
  __mmask64 bad = 0;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i x = _mm512_loadu_si512(q + i);
    bad |= _mm512_cmpgt_epi8_mask(x, hi) | _mm512_cmplt_epi8_mask(x, lo);
  }
  return bad == 0 && ref::qsgd_valid(q + i, n - i, levels);
}

void qsgd_dequant(const std::int8_t* q, std::size_t n, float step, float* out, bool add) {
  const __m512 vs = _mm512_set1_ps(step);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i l = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i)));
    _mm512_storeu_ps(out + i, _mm512_add_ps(base_for(out + i, add), _mm512_mul_ps(_mm512_cvtepi32_ps(l), vs)));
  }
  ref::qsgd_dequant(q + i, n - i, step, out + i, add);
}

float add_abssum(const float* v, float* r, std::size_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 x0 = _mm512_add_ps(_mm512_loadu_ps(v + i), _mm512_loadu_ps(r + i));
    const __m512 x1 = _mm512_add_ps(_mm512_loadu_ps(v + i + 16), _mm512_loadu_ps(r + i + 16));
    _mm512_storeu_ps(r + i, x0);
    _mm512_storeu_ps(r + i + 16, x1);
    s0 = _mm512_add_ps(s0, _mm512_abs_ps(x0));
    s1 = _mm512_add_ps(s1, _mm512_abs_ps(x1));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) + ref::add_abssum(v + i, r + i, n - i);
}

void sign_encode(float* r, std::size_t n, float scale, std::uint8_t* bits) {
  const __m512 pos = _mm512_set1_ps(scale), neg = _mm512_set1_ps(-scale);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(r + i);
    const __mmask16 m = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    _mm512_storeu_ps(r + i, _mm512_sub_ps(x, _mm512_mask_mov_ps(pos, m, neg)));
    const std::uint16_t packed = m;
    std::memcpy(bits + i / 8, &packed, 2);
  }
  ref::sign_encode(r + i, n - i, scale, bits + i / 8);
}

void sign_decode(const std::uint8_t* bits, std::size_t n, float scale, float* out, bool add) {
  const __m512 pos = _mm512_set1_ps(scale), neg = _mm512_set1_ps(-scale);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::uint16_t packed;
    std::memcpy(&packed, bits + i / 8, 2);
    const __m512 x = _mm512_mask_mov_ps(pos, static_cast<__mmask16>(packed), neg);
    _mm512_storeu_ps(out + i, _mm512_add_ps(base_for(out + i, add), x));
  }
  ref::sign_decode(bits + i / 8, n - i, scale, out + i, add);
}

}  // namespace

extern const CodecKernels kAvx512Kernels = {
    f32_encode,       fp16_encode,   bf16_encode,  f32_finite,    fp16_finite,   bf16_finite,
    f32_decode,       fp16_decode,   bf16_decode,  threshold_sparse, threshold_bitmap, bitmap_check,
    bitmap_decode,    select_abs_ge, add_absmax,   qsgd_quantize, qsgd_valid,    qsgd_dequant,
    add_abssum,       sign_encode,   sign_decode,
};

}  // namespace starling::protocols::simd
