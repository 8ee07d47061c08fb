// AVX2 + FMA + F16C codec kernels: kernels_impl.h over 8-lane vectors, compiled with
// per-file ISA flags and reached only through codec_kernels() at the avx2 level or above.
// Lane masks are vectors; compress uses a 256-entry permutation table (AVX2 has none).
#include <immintrin.h>

#include "protocols/simd/kernels_impl.h"

namespace starling::protocols::simd {
namespace {

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

struct Avx2 {
  static constexpr std::size_t W = 8;
  using F = __m256;
  using I = __m256i;
  using M = __m256i;      // selected lanes all ones
  using Flags = __m256i;  // any lane or byte set: some lane matched
  using H = __m128i;      // W halves

  static F load(const void* p) { return _mm256_loadu_ps(static_cast<const float*>(p)); }
  static void store(void* p, F x) { _mm256_storeu_ps(static_cast<float*>(p), x); }
  static I load_i(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float x) { return _mm256_set1_ps(x); }
  static I set1_i(int x) { return _mm256_set1_epi32(x); }
  static I set1_i16(short x) { return _mm256_set1_epi16(x); }
  static I set1_i8(char x) { return _mm256_set1_epi8(x); }
  static I iota() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }

  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F min(F a, F b) { return _mm256_min_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F abs(F x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))); }
  static I add_i(I a, I b) { return _mm256_add_epi32(a, b); }
  static I and_i(I a, I b) { return _mm256_and_si256(a, b); }
  static I xor_i(I a, I b) { return _mm256_xor_si256(a, b); }
  static I mullo(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static I min_i(I a, I b) { return _mm256_min_epi32(a, b); }
  template <int s>
  static I srli(I x) { return _mm256_srli_epi32(x, s); }
  template <int s>
  static I slli(I x) { return _mm256_slli_epi32(x, s); }
  static I srlv(I x, I s) { return _mm256_srlv_epi32(x, s); }
  static I as_int(F x) { return _mm256_castps_si256(x); }
  static F as_float(I x) { return _mm256_castsi256_ps(x); }
  static F to_float(I x) { return _mm256_cvtepi32_ps(x); }
  static I trunc(F x) { return _mm256_cvttps_epi32(x); }

  // Comparisons give lane masks; bits() packs one bit per lane, lane 0 lowest.
  static M ge(F a, F b) { return as_int(_mm256_cmp_ps(a, b, _CMP_GE_OQ)); }
  static M le(F a, F b) { return as_int(_mm256_cmp_ps(a, b, _CMP_LE_OQ)); }
  static M lt(F a, F b) { return as_int(_mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
  static M eq(I a, I b) { return _mm256_cmpeq_epi32(a, b); }
  static M mask_or(M a, M b) { return _mm256_or_si256(a, b); }
  static bool none_set(M m) { return bits(m) == 0; }  // one movemask, shared with bits()
  static unsigned bits(M m) { return static_cast<unsigned>(_mm256_movemask_ps(as_float(m))); }
  static M mask_from_bits(unsigned b) {
    const I lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(b)), lane_bit), lane_bit);
  }
  // select: m ? b : a. where: m ? x : 0. either_of (disjoint masks): m1 ? a : m2 ? b : 0.
  // zero_where: m ? 0 : x. sub_where / add_where: m ? t ∓ x : t. neg_where: m ? −x : x.
  static F select(M m, F a, F b) { return _mm256_blendv_ps(a, b, as_float(m)); }
  static F where(M m, F x) { return _mm256_and_ps(as_float(m), x); }
  static F either_of(M m1, F a, M m2, F b) { return _mm256_or_ps(where(m1, a), where(m2, b)); }
  static F zero_where(M m, F x) { return _mm256_andnot_ps(as_float(m), x); }
  static F sub_where(F t, M m, F x) { return _mm256_sub_ps(t, where(m, x)); }
  static F add_where(F t, M m, F x) { return _mm256_add_ps(t, where(m, x)); }
  static I neg_where(I x, M m) { return _mm256_blendv_epi8(x, _mm256_sub_epi32(_mm256_setzero_si256(), x), m); }

  // Accumulated with either() over a loop and tested once with none().
  static Flags flags(M m) { return m; }
  static Flags eq16(I a, I b) { return _mm256_cmpeq_epi16(a, b); }
  static Flags gt8(I a, I b) { return _mm256_cmpgt_epi8(a, b); }
  static Flags lt8(I a, I b) { return _mm256_cmpgt_epi8(b, a); }
  static Flags no_flags() { return _mm256_setzero_si256(); }
  static Flags either(Flags a, Flags b) { return _mm256_or_si256(a, b); }
  static bool none(Flags f) { return _mm256_testz_si256(f, f); }

  // Halves round to nearest even; u16 loads zero-extend and i8 loads sign-extend.
  static H to_half(F x) { return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F from_half(H h) { return _mm256_cvtph_ps(h); }
  static H load_half(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static void store_half(void* p, H h) { _mm_storeu_si128(static_cast<__m128i*>(p), h); }
  static I load_u16(const void* p) { return _mm256_cvtepu16_epi32(load_half(p)); }
  static void store_u16(void* p, I x) {  // lanes hold values below 2^16, so no saturation
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    _mm_storeu_si128(static_cast<__m128i*>(p), packed);
  }
  static I load_i8(const void* p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(p))); }
  static void store_i8(void* p, I x) {  // lanes hold values in [-127, 127], so no saturation
    const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    _mm_storel_epi64(static_cast<__m128i*>(p), _mm_packs_epi16(p16, p16));
  }

  static float hmax(F x) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
  }
  static float hsum(F x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }

  // Stores all W lanes, the selected ones (bits) first; callers leave room past the count.
  class Compress {
   public:
    explicit Compress(unsigned bits)
        : perm_(_mm256_load_si256(reinterpret_cast<const __m256i*>(kCompress.lanes[bits]))) {}
    void store(std::int32_t* p, I x) const {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_permutevar8x32_epi32(x, perm_));
    }
    void store(float* p, F x) const { _mm256_storeu_ps(p, _mm256_permutevar8x32_ps(x, perm_)); }

   private:
    __m256i perm_;
  };
};

}  // namespace

extern const CodecKernels kAvx2Kernels = make_kernels<Avx2>();

}  // namespace starling::protocols::simd
