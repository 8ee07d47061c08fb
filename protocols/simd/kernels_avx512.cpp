// AVX-512 (F/BW/DQ/VL + F16C) codec kernels: kernels_impl.h over 16-lane vectors, compiled
// with per-file ISA flags and reached only through codec_kernels() at the avx512 level.
// Lane masks are mask registers. Compress writes go to a register and then a full
// unaligned store (a compress straight to memory is microcoded and slow on AMD Zen 4).
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

#include "protocols/simd/kernels_impl.h"

namespace starling::protocols::simd {
namespace {

struct Avx512 {
  static constexpr std::size_t W = 16;
  using F = __m512;
  using I = __m512i;
  using M = __mmask16;
  using Flags = std::uint64_t;  // the bits of up to 64 lanes
  using H = __m256i;

  static F load(const void* p) { return _mm512_loadu_ps(p); }
  static void store(void* p, F x) { _mm512_storeu_ps(p, x); }
  static I load_i(const void* p) { return _mm512_loadu_si512(p); }
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float x) { return _mm512_set1_ps(x); }
  static I set1_i(int x) { return _mm512_set1_epi32(x); }
  static I set1_i16(short x) { return _mm512_set1_epi16(x); }
  static I set1_i8(char x) { return _mm512_set1_epi8(x); }
  // A function, not a constant: a namespace-scope vector would run AVX-512 code at load time.
  static I iota() { return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }

  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F min(F a, F b) { return _mm512_min_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static F abs(F x) { return _mm512_abs_ps(x); }
  static I add_i(I a, I b) { return _mm512_add_epi32(a, b); }
  static I and_i(I a, I b) { return _mm512_and_si512(a, b); }
  static I xor_i(I a, I b) { return _mm512_xor_si512(a, b); }
  static I mullo(I a, I b) { return _mm512_mullo_epi32(a, b); }
  static I min_i(I a, I b) { return _mm512_min_epi32(a, b); }
  template <int s>
  static I srli(I x) { return _mm512_srli_epi32(x, s); }
  template <int s>
  static I slli(I x) { return _mm512_slli_epi32(x, s); }
  static I srlv(I x, I s) { return _mm512_srlv_epi32(x, s); }
  static I as_int(F x) { return _mm512_castps_si512(x); }
  static F as_float(I x) { return _mm512_castsi512_ps(x); }
  static F to_float(I x) { return _mm512_cvtepi32_ps(x); }
  static I trunc(F x) { return _mm512_cvttps_epi32(x); }

  static M ge(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static M le(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
  static M lt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M eq(I a, I b) { return _mm512_cmpeq_epi32_mask(a, b); }
  static M mask_or(M a, M b) { return a | b; }
  static bool none_set(M m) { return m == 0; }
  static unsigned bits(M m) { return m; }
  static M mask_from_bits(unsigned b) { return static_cast<M>(b); }
  static F select(M m, F a, F b) { return _mm512_mask_mov_ps(a, m, b); }
  static F where(M m, F x) { return _mm512_maskz_mov_ps(m, x); }
  static F either_of(M m1, F a, M m2, F b) { return _mm512_mask_mov_ps(where(m1, a), m2, b); }
  static F zero_where(M m, F x) { return _mm512_maskz_mov_ps(static_cast<M>(~m), x); }
  static F sub_where(F t, M m, F x) { return _mm512_mask_sub_ps(t, m, t, x); }
  static F add_where(F t, M m, F x) { return _mm512_mask_add_ps(t, m, t, x); }
  static I neg_where(I x, M m) { return _mm512_mask_sub_epi32(x, m, _mm512_setzero_si512(), x); }

  static Flags flags(M m) { return m; }
  static Flags eq16(I a, I b) { return _mm512_cmpeq_epi16_mask(a, b); }
  static Flags gt8(I a, I b) { return _mm512_cmpgt_epi8_mask(a, b); }
  static Flags lt8(I a, I b) { return _mm512_cmplt_epi8_mask(a, b); }
  static Flags no_flags() { return 0; }
  static Flags either(Flags a, Flags b) { return a | b; }
  static bool none(Flags f) { return f == 0; }

  static H to_half(F x) { return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F from_half(H h) { return _mm512_cvtph_ps(h); }
  static H load_half(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static void store_half(void* p, H h) { _mm256_storeu_si256(static_cast<__m256i*>(p), h); }
  static I load_u16(const void* p) { return _mm512_cvtepu16_epi32(load_half(p)); }
  static void store_u16(void* p, I x) { store_half(p, _mm512_cvtepi32_epi16(x)); }
  static I load_i8(const void* p) { return _mm512_cvtepi8_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
  static void store_i8(void* p, I x) { _mm_storeu_si128(static_cast<__m128i*>(p), _mm512_cvtepi32_epi8(x)); }

  static float hmax(F x) { return _mm512_reduce_max_ps(x); }
  static float hsum(F x) { return _mm512_reduce_add_ps(x); }

  class Compress {
   public:
    explicit Compress(unsigned bits) : m_(static_cast<M>(bits)) {}
    void store(std::int32_t* p, I x) const { _mm512_storeu_si512(p, _mm512_maskz_compress_epi32(m_, x)); }
    void store(float* p, F x) const { _mm512_storeu_ps(p, _mm512_maskz_compress_ps(m_, x)); }

   private:
    M m_;
  };
};

}  // namespace

extern const CodecKernels kAvx512Kernels = make_kernels<Avx512>();

}  // namespace starling::protocols::simd
