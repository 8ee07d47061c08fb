// AVX2 + FMA + F16C codec kernels. Compiled with per-file ISA flags and reached only
// through codec_kernels() when the CPU has AVX2; tails go to the scalar kernels. Packing
// of selected lanes uses a 256-entry permutation table (AVX2 has no compress).
#include <immintrin.h>

#include <cstring>

#include "protocols/simd/scalar_kernels.h"

namespace starling::protocols::simd {
namespace {

namespace ref = scalar;

// Lane permutations that move the selected lanes of an 8-bit mask to the front.
struct CompressTable {
  alignas(32) std::int32_t lanes[256][8];
};

constexpr CompressTable make_compress_table() {
  CompressTable t{};
  for (int m = 0; m < 256; ++m) {
    int k = 0;
    for (int lane = 0; lane < 8; ++lane)
      if (m & (1 << lane)) t.lanes[m][k++] = lane;
    for (; k < 8; ++k) t.lanes[m][k] = 0;
  }
  return t;
}

constexpr CompressTable kCompress = make_compress_table();

__m256i compress_perm(int mask) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompress.lanes[mask])); }

__m256i iota() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }

__m256 abs_ps(__m256 x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))); }

__m256 clamp(__m256 x, float limit) {
  return _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-limit)), _mm256_set1_ps(limit));
}

__m256 base_for(const float* out, bool add) { return add ? _mm256_loadu_ps(out) : _mm256_setzero_ps(); }

std::uint32_t spread16(std::uint32_t x) {
  x = (x | (x << 8)) & 0x00FF00FFu;
  x = (x | (x << 4)) & 0x0F0F0F0Fu;
  x = (x | (x << 2)) & 0x33333333u;
  x = (x | (x << 1)) & 0x55555555u;
  return x;
}

void f32_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 t = _mm256_add_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(r + i));
    _mm256_storeu_ps(reinterpret_cast<float*>(out + 4 * i), t);
    _mm256_storeu_ps(r + i, _mm256_setzero_ps());
  }
  ref::f32_encode(v + i, r + i, out + 4 * i, n - i);
}

void fp16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 t = _mm256_add_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(r + i));
    __m128i h = _mm256_cvtps_ph(clamp(t, ref::kHalfMax), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
    _mm256_storeu_ps(r + i, _mm256_sub_ps(t, _mm256_cvtph_ps(h)));
  }
  ref::fp16_encode(v + i, r + i, out + 2 * i, n - i);
}

void bf16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  const __m256i round = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1);
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 t = _mm256_add_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(r + i));
    __m256i u = _mm256_castps_si256(clamp(t, ref::kBf16Max));
    u = _mm256_add_epi32(u, _mm256_add_epi32(round, _mm256_and_si256(_mm256_srli_epi32(u, 16), one)));
    const __m256i h = _mm256_srli_epi32(u, 16);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), packed);
    _mm256_storeu_ps(r + i, _mm256_sub_ps(t, _mm256_castsi256_ps(_mm256_and_si256(u, high))));
  }
  ref::bf16_encode(v + i, r + i, out + 2 * i, n - i);
}

bool f32_finite(const std::uint8_t* in, std::size_t n) {
  const __m256i exp = _mm256_set1_epi32(0x7F800000);
  __m256i bad = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 4 * i));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_and_si256(x, exp), exp));
  }
  return _mm256_testz_si256(bad, bad) && ref::f32_finite(in + 4 * i, n - i);
}

bool narrow_finite(const std::uint8_t* in, std::size_t n, short exp_bits,
                   bool (*tail)(const std::uint8_t*, std::size_t)) {
  const __m256i exp = _mm256_set1_epi16(exp_bits);
  __m256i bad = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi16(_mm256_and_si256(x, exp), exp));
  }
  return _mm256_testz_si256(bad, bad) && tail(in + 2 * i, n - i);
}

bool fp16_finite(const std::uint8_t* in, std::size_t n) { return narrow_finite(in, n, 0x7C00, ref::fp16_finite); }
bool bf16_finite(const std::uint8_t* in, std::size_t n) { return narrow_finite(in, n, 0x7F80, ref::bf16_finite); }

void f32_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(in + 4 * i));
    _mm256_storeu_ps(out + i, _mm256_add_ps(base_for(out + i, add), x));
  }
  ref::f32_decode(in + 4 * i, out + i, n - i, add);
}

void fp16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i)));
    _mm256_storeu_ps(out + i, _mm256_add_ps(base_for(out + i, add), x));
  }
  ref::fp16_decode(in + 2 * i, out + i, n - i, add);
}

void bf16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i)));
    const __m256 x = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    _mm256_storeu_ps(out + i, _mm256_add_ps(base_for(out + i, add), x));
  }
  ref::bf16_decode(in + 2 * i, out + i, n - i, add);
}

struct Masks {
  int pos, neg;  // 8-bit lane masks
};

Masks threshold8(const float* v, float* r, std::size_t i, __m256 tau, __m256 ntau, float clip) {
  __m256 t = _mm256_add_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(r + i));
  const __m256 pos = _mm256_cmp_ps(t, tau, _CMP_GE_OQ);
  const __m256 neg = _mm256_cmp_ps(t, ntau, _CMP_LE_OQ);
  t = _mm256_sub_ps(t, _mm256_and_ps(pos, tau));
  t = _mm256_add_ps(t, _mm256_and_ps(neg, tau));
  if (clip > 0.0f) t = clamp(t, clip);
  _mm256_storeu_ps(r + i, t);
  return {_mm256_movemask_ps(pos), _mm256_movemask_ps(neg)};
}

std::size_t threshold_sparse(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::int32_t* out) {
  const __m256 vt = _mm256_set1_ps(tau), vnt = _mm256_set1_ps(-tau);
  std::size_t count = 0, i = begin;
  for (; i + 8 <= end; i += 8) {
    const Masks m = threshold8(v, r, i, vt, vnt, clip);
    const int any = m.pos | m.neg;
    if (any == 0) continue;
    const __m256i idx = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(i + 1)), iota());
    const __m256i negate = _mm256_cmpgt_epi32(
        _mm256_and_si256(_mm256_set1_epi32(m.neg), _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
        _mm256_setzero_si256());
    const __m256i signed_idx = _mm256_blendv_epi8(idx, _mm256_sub_epi32(_mm256_setzero_si256(), idx), negate);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + count),
                        _mm256_permutevar8x32_epi32(signed_idx, compress_perm(any)));
    count += static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(any)));
  }
  return count + ref::threshold_sparse(v, r, i, end, tau, clip, out + count);
}

std::size_t threshold_bitmap(const float* v, float* r, std::size_t begin, std::size_t end, float tau,
                             float clip, std::uint32_t* words) {
  const __m256 vt = _mm256_set1_ps(tau), vnt = _mm256_set1_ps(-tau);
  std::size_t count = 0, i = begin;
  for (; i + 16 <= end; i += 16) {
    const Masks a = threshold8(v, r, i, vt, vnt, clip);
    const Masks b = threshold8(v, r, i + 8, vt, vnt, clip);
    const std::uint32_t pos = static_cast<std::uint32_t>(a.pos | (b.pos << 8));
    const std::uint32_t neg = static_cast<std::uint32_t>(a.neg | (b.neg << 8));
    words[i / 16] = spread16(pos) | (spread16(neg) << 1);
    count += static_cast<std::size_t>(__builtin_popcount(pos | neg));
  }
  return count + ref::threshold_bitmap(v, r, i, end, tau, clip, words);
}

std::int64_t bitmap_check(const std::uint8_t* words, std::size_t n) {
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
  const __m256i lo_shift = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  const __m256i hi_shift = _mm256_setr_epi32(16, 18, 20, 22, 24, 26, 28, 30);
  const __m256i three = _mm256_set1_epi32(3), one = _mm256_set1_epi32(1), two = _mm256_set1_epi32(2);
  const __m256 vt = _mm256_set1_ps(tau), vnt = _mm256_set1_ps(-tau);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::uint32_t word;
    std::memcpy(&word, words + i / 4, 4);
    const __m256i w = _mm256_set1_epi32(static_cast<int>(word));
    for (int half = 0; half < 2; ++half) {
      const __m256i codes = _mm256_and_si256(_mm256_srlv_epi32(w, half ? hi_shift : lo_shift), three);
      const __m256 x = _mm256_or_ps(_mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(codes, one)), vt),
                                    _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(codes, two)), vnt));
      float* o = out + i + 8 * half;
      _mm256_storeu_ps(o, _mm256_add_ps(base_for(o, add), x));
    }
  }
  ref::bitmap_decode(words + i / 4, n - i, tau, out + i, add);
}

std::size_t select_abs_ge(const float* v, float* r, std::size_t begin, std::size_t end, float t,
                          std::uint32_t* idx, float* val) {
  const __m256 vt = _mm256_set1_ps(t);
  std::size_t count = 0, i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 x = _mm256_add_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(r + i));
    const __m256 sel = _mm256_cmp_ps(abs_ps(x), vt, _CMP_GE_OQ);
    _mm256_storeu_ps(r + i, _mm256_andnot_ps(sel, x));
    const int m = _mm256_movemask_ps(sel);
    if (m == 0) continue;
    const __m256i perm = compress_perm(m);
    const __m256i at = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(i)), iota());
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + count), _mm256_permutevar8x32_epi32(at, perm));
    _mm256_storeu_ps(val + count, _mm256_permutevar8x32_ps(x, perm));
    count += static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(m)));
  }
  return count + ref::select_abs_ge(v, r, i, end, t, idx + count, val + count);
}

float hmax(__m256 x) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

float hsum(__m256 x) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

float add_absmax(const float* v, float* r, std::size_t n) {
  __m256 m = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_add_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(r + i));
    _mm256_storeu_ps(r + i, x);
    m = _mm256_max_ps(m, abs_ps(x));
  }
  const float head = hmax(m), tail = ref::add_absmax(v + i, r + i, n - i);
  return head > tail ? head : tail;
}

__m256i mix(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7FEB352D));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(static_cast<int>(0x846CA68Bu)));
  return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

void qsgd_quantize(float* r, std::size_t n, float scale, int levels, std::uint32_t key, std::uint32_t base,
                   std::int8_t* q) {
  const float inv_s = scale > 0.0f ? static_cast<float>(levels) / scale : 0.0f;
  const __m256 inv = _mm256_set1_ps(inv_s), step = _mm256_set1_ps(scale / static_cast<float>(levels));
  const __m256 ulp = _mm256_set1_ps(5.9604645e-8f);
  const __m256i golden = _mm256_set1_epi32(static_cast<int>(0x9E3779B1u)), vkey = _mm256_set1_epi32(static_cast<int>(key));
  const __m256i top = _mm256_set1_epi32(levels);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i index = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(base + i)), iota());
    const __m256i h = mix(_mm256_xor_si256(_mm256_mullo_epi32(index, golden), vkey));
    const __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(h, 8)), ulp);
    const __m256 x = _mm256_loadu_ps(r + i);
    const __m256 y = _mm256_add_ps(_mm256_mul_ps(abs_ps(x), inv), u);
    __m256i level = _mm256_min_epi32(_mm256_cvttps_epi32(y), top);
    const __m256i negative = _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
    level = _mm256_blendv_epi8(level, _mm256_sub_epi32(_mm256_setzero_si256(), level), negative);
    const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(level), _mm256_extracti128_si256(level, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(p16, p16));
    _mm256_storeu_ps(r + i, _mm256_sub_ps(x, _mm256_mul_ps(_mm256_cvtepi32_ps(level), step)));
  }
  ref::qsgd_quantize(r + i, n - i, scale, levels, key, base + static_cast<std::uint32_t>(i), q + i);
}

bool qsgd_valid(const std::int8_t* q, std::size_t n, int levels) {
  const __m256i hi = _mm256_set1_epi8(static_cast<char>(levels)), lo = _mm256_set1_epi8(static_cast<char>(-levels));
  __m256i bad = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i));
    bad = _mm256_or_si256(bad, _mm256_or_si256(_mm256_cmpgt_epi8(x, hi), _mm256_cmpgt_epi8(lo, x)));
  }
  return _mm256_testz_si256(bad, bad) && ref::qsgd_valid(q + i, n - i, levels);
}

void qsgd_dequant(const std::int8_t* q, std::size_t n, float step, float* out, bool add) {
  const __m256 vs = _mm256_set1_ps(step);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i l = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + i)));
    _mm256_storeu_ps(out + i, _mm256_add_ps(base_for(out + i, add), _mm256_mul_ps(_mm256_cvtepi32_ps(l), vs)));
  }
  ref::qsgd_dequant(q + i, n - i, step, out + i, add);
}

float add_abssum(const float* v, float* r, std::size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = _mm256_add_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(r + i));
    const __m256 x1 = _mm256_add_ps(_mm256_loadu_ps(v + i + 8), _mm256_loadu_ps(r + i + 8));
    _mm256_storeu_ps(r + i, x0);
    _mm256_storeu_ps(r + i + 8, x1);
    s0 = _mm256_add_ps(s0, abs_ps(x0));
    s1 = _mm256_add_ps(s1, abs_ps(x1));
  }
  return hsum(_mm256_add_ps(s0, s1)) + ref::add_abssum(v + i, r + i, n - i);
}

void sign_encode(float* r, std::size_t n, float scale, std::uint8_t* bits) {
  const __m256 pos = _mm256_set1_ps(scale), neg = _mm256_set1_ps(-scale);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(r + i);
    const __m256 m = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
    _mm256_storeu_ps(r + i, _mm256_sub_ps(x, _mm256_blendv_ps(pos, neg, m)));
    bits[i / 8] = static_cast<std::uint8_t>(_mm256_movemask_ps(m));
  }
  ref::sign_encode(r + i, n - i, scale, bits + i / 8);
}

void sign_decode(const std::uint8_t* bits, std::size_t n, float scale, float* out, bool add) {
  const __m256 pos = _mm256_set1_ps(scale), neg = _mm256_set1_ps(-scale);
  const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i b = _mm256_and_si256(_mm256_set1_epi32(bits[i / 8]), lane_bit);
    const __m256 m = _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, lane_bit));
    _mm256_storeu_ps(out + i, _mm256_add_ps(base_for(out + i, add), _mm256_blendv_ps(pos, neg, m)));
  }
  ref::sign_decode(bits + i / 8, n - i, scale, out + i, add);
}

}  // namespace

extern const CodecKernels kAvx2Kernels = {
    f32_encode,       fp16_encode,   bf16_encode,  f32_finite,    fp16_finite,   bf16_finite,
    f32_decode,       fp16_decode,   bf16_decode,  threshold_sparse, threshold_bitmap, bitmap_check,
    bitmap_decode,    select_abs_ge, add_absmax,   qsgd_quantize, qsgd_valid,    qsgd_dequant,
    add_abssum,       sign_encode,   sign_decode,
};

}  // namespace starling::protocols::simd
