// NEON codec kernels: kernels_impl.h over 8 lanes held as two 128-bit registers (the sign
// codec packs 8 lanes into a byte), reached through codec_kernels() at the neon level. NEON
// is part of every AArch64 CPU, so the file needs no flags. Lane masks are vectors, as in
// AVX2; compress goes by a 256-entry table of byte shuffles (NEON has no compress).
#include <arm_neon.h>

#include "protocols/simd/kernels_impl.h"

namespace starling::protocols::simd {
namespace {

// For each 8-bit lane mask, the bytes of the 32-byte vector that move the selected int32
// lanes to the front (the rest are lane 0's), as indices for a two-register table lookup.
struct CompressTable {
  alignas(16) std::uint8_t bytes[256][32];
};

constexpr CompressTable make_compress_table() {
  CompressTable t{};
  for (int m = 0; m < 256; ++m) {
    int k = 0;
    for (int lane = 0; lane < 8; ++lane)
      if (m & (1 << lane)) {
        for (int b = 0; b < 4; ++b) t.bytes[m][4 * k + b] = static_cast<std::uint8_t>(4 * lane + b);
        ++k;
      }
    for (; k < 8; ++k)
      for (int b = 0; b < 4; ++b) t.bytes[m][4 * k + b] = static_cast<std::uint8_t>(b);
  }
  return t;
}

constexpr CompressTable kCompress = make_compress_table();

template <class T>
struct Pair {
  T lo, hi;
};

struct Neon {
  static constexpr std::size_t W = 8;
  using F = Pair<float32x4_t>;
  using I = Pair<int32x4_t>;
  using M = Pair<uint32x4_t>;  // selected lanes all ones
  using Flags = uint32x4_t;    // any bit set: some lane matched
  using H = float16x8_t;       // W halves

  static F load(const void* p) {
    const float* f = static_cast<const float*>(p);
    return {vld1q_f32(f), vld1q_f32(f + 4)};
  }
  static void store(void* p, F x) {
    float* f = static_cast<float*>(p);
    vst1q_f32(f, x.lo);
    vst1q_f32(f + 4, x.hi);
  }
  static I load_i(const void* p) {
    const std::int32_t* q = static_cast<const std::int32_t*>(p);
    return {vld1q_s32(q), vld1q_s32(q + 4)};
  }
  static F zero() { return set1(0.0f); }
  static F set1(float x) { return {vdupq_n_f32(x), vdupq_n_f32(x)}; }
  static I set1_i(int x) { return {vdupq_n_s32(x), vdupq_n_s32(x)}; }
  static I set1_i16(short x) {
    const int32x4_t v = vreinterpretq_s32_s16(vdupq_n_s16(x));
    return {v, v};
  }
  static I set1_i8(char x) {
    const int32x4_t v = vreinterpretq_s32_s8(vdupq_n_s8(static_cast<std::int8_t>(x)));
    return {v, v};
  }
  static I iota() {
    constexpr std::int32_t lanes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    return load_i(lanes);
  }

  static F add(F a, F b) { return {vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
  static F sub(F a, F b) { return {vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)}; }
  static F mul(F a, F b) { return {vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }
  // minnm / maxnm return the number where one operand is NaN, as x86's min / max return
  // their second operand: a clamp maps NaN to a bound on every vector path.
  static F min(F a, F b) { return {vminnmq_f32(a.lo, b.lo), vminnmq_f32(a.hi, b.hi)}; }
  static F max(F a, F b) { return {vmaxnmq_f32(a.lo, b.lo), vmaxnmq_f32(a.hi, b.hi)}; }
  static F abs(F x) { return {vabsq_f32(x.lo), vabsq_f32(x.hi)}; }
  static I add_i(I a, I b) { return {vaddq_s32(a.lo, b.lo), vaddq_s32(a.hi, b.hi)}; }
  static I and_i(I a, I b) { return {vandq_s32(a.lo, b.lo), vandq_s32(a.hi, b.hi)}; }
  static I xor_i(I a, I b) { return {veorq_s32(a.lo, b.lo), veorq_s32(a.hi, b.hi)}; }
  static I mullo(I a, I b) { return {vmulq_s32(a.lo, b.lo), vmulq_s32(a.hi, b.hi)}; }
  static I min_i(I a, I b) { return {vminq_s32(a.lo, b.lo), vminq_s32(a.hi, b.hi)}; }
  template <int s>
  static I srli(I x) {
    return {vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(x.lo), s)),
            vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(x.hi), s))};
  }
  template <int s>
  static I slli(I x) { return {vshlq_n_s32(x.lo, s), vshlq_n_s32(x.hi, s)}; }
  static I srlv(I x, I s) {  // a negative count shifts right
    return {vreinterpretq_s32_u32(vshlq_u32(vreinterpretq_u32_s32(x.lo), vnegq_s32(s.lo))),
            vreinterpretq_s32_u32(vshlq_u32(vreinterpretq_u32_s32(x.hi), vnegq_s32(s.hi)))};
  }
  static I as_int(F x) { return {vreinterpretq_s32_f32(x.lo), vreinterpretq_s32_f32(x.hi)}; }
  static F as_float(I x) { return {vreinterpretq_f32_s32(x.lo), vreinterpretq_f32_s32(x.hi)}; }
  static F to_float(I x) { return {vcvtq_f32_s32(x.lo), vcvtq_f32_s32(x.hi)}; }
  static I trunc(F x) { return {vcvtq_s32_f32(x.lo), vcvtq_s32_f32(x.hi)}; }

  // Comparisons give lane masks; bits() packs one bit per lane, lane 0 lowest.
  static M ge(F a, F b) { return {vcgeq_f32(a.lo, b.lo), vcgeq_f32(a.hi, b.hi)}; }
  static M le(F a, F b) { return {vcleq_f32(a.lo, b.lo), vcleq_f32(a.hi, b.hi)}; }
  static M lt(F a, F b) { return {vcltq_f32(a.lo, b.lo), vcltq_f32(a.hi, b.hi)}; }
  static M eq(I a, I b) { return {vceqq_s32(a.lo, b.lo), vceqq_s32(a.hi, b.hi)}; }
  static M mask_or(M a, M b) { return {vorrq_u32(a.lo, b.lo), vorrq_u32(a.hi, b.hi)}; }
  static bool none_set(M m) { return vmaxvq_u32(vorrq_u32(m.lo, m.hi)) == 0; }
  static constexpr std::uint32_t kLaneBit[W] = {1, 2, 4, 8, 16, 32, 64, 128};
  static unsigned bits(M m) {
    return vaddvq_u32(vandq_u32(m.lo, vld1q_u32(kLaneBit))) + vaddvq_u32(vandq_u32(m.hi, vld1q_u32(kLaneBit + 4)));
  }
  static M mask_from_bits(unsigned b) {
    const uint32x4_t all = vdupq_n_u32(b);
    return {vtstq_u32(all, vld1q_u32(kLaneBit)), vtstq_u32(all, vld1q_u32(kLaneBit + 4))};
  }
  // select: m ? b : a. where: m ? x : 0. either_of (disjoint masks): m1 ? a : m2 ? b : 0.
  // zero_where: m ? 0 : x. sub_where / add_where: m ? t ∓ x : t. neg_where: m ? −x : x.
  static F select(M m, F a, F b) { return {vbslq_f32(m.lo, b.lo, a.lo), vbslq_f32(m.hi, b.hi, a.hi)}; }
  static F where(M m, F x) {
    return {vreinterpretq_f32_u32(vandq_u32(m.lo, vreinterpretq_u32_f32(x.lo))),
            vreinterpretq_f32_u32(vandq_u32(m.hi, vreinterpretq_u32_f32(x.hi)))};
  }
  static F either_of(M m1, F a, M m2, F b) {
    const F x = where(m1, a), y = where(m2, b);
    return {vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(x.lo), vreinterpretq_u32_f32(y.lo))),
            vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(x.hi), vreinterpretq_u32_f32(y.hi)))};
  }
  static F zero_where(M m, F x) {
    return {vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(x.lo), m.lo)),
            vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(x.hi), m.hi))};
  }
  static F sub_where(F t, M m, F x) { return sub(t, where(m, x)); }
  static F add_where(F t, M m, F x) { return add(t, where(m, x)); }
  static I neg_where(I x, M m) { return {vbslq_s32(m.lo, vnegq_s32(x.lo), x.lo), vbslq_s32(m.hi, vnegq_s32(x.hi), x.hi)}; }

  // Accumulated with either() over a loop and tested once with none().
  static Flags flags(M m) { return vorrq_u32(m.lo, m.hi); }
  static Flags eq16(I a, I b) {
    return vorrq_u32(vreinterpretq_u32_u16(vceqq_s16(vreinterpretq_s16_s32(a.lo), vreinterpretq_s16_s32(b.lo))),
                     vreinterpretq_u32_u16(vceqq_s16(vreinterpretq_s16_s32(a.hi), vreinterpretq_s16_s32(b.hi))));
  }
  static Flags gt8(I a, I b) {
    return vorrq_u32(vreinterpretq_u32_u8(vcgtq_s8(vreinterpretq_s8_s32(a.lo), vreinterpretq_s8_s32(b.lo))),
                     vreinterpretq_u32_u8(vcgtq_s8(vreinterpretq_s8_s32(a.hi), vreinterpretq_s8_s32(b.hi))));
  }
  static Flags lt8(I a, I b) { return gt8(b, a); }
  static Flags no_flags() { return vdupq_n_u32(0); }
  static Flags either(Flags a, Flags b) { return vorrq_u32(a, b); }
  static bool none(Flags f) { return vmaxvq_u32(f) == 0; }

  // Halves round to nearest even (the default FPCR); u16 loads zero-extend and i8 loads
  // sign-extend.
  static H to_half(F x) { return vcombine_f16(vcvt_f16_f32(x.lo), vcvt_f16_f32(x.hi)); }
  static F from_half(H h) { return {vcvt_f32_f16(vget_low_f16(h)), vcvt_high_f32_f16(h)}; }
  static H load_half(const void* p) { return vreinterpretq_f16_u16(vld1q_u16(static_cast<const std::uint16_t*>(p))); }
  static void store_half(void* p, H h) { vst1q_u16(static_cast<std::uint16_t*>(p), vreinterpretq_u16_f16(h)); }
  static I load_u16(const void* p) {
    const uint16x8_t h = vld1q_u16(static_cast<const std::uint16_t*>(p));
    return {vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h))), vreinterpretq_s32_u32(vmovl_high_u16(h))};
  }
  static void store_u16(void* p, I x) {  // lanes hold values below 2^16
    const uint16x8_t packed = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(x.lo)), vmovn_u32(vreinterpretq_u32_s32(x.hi)));
    vst1q_u16(static_cast<std::uint16_t*>(p), packed);
  }
  static I load_i8(const void* p) {
    const int16x8_t w = vmovl_s8(vld1_s8(static_cast<const std::int8_t*>(p)));
    return {vmovl_s16(vget_low_s16(w)), vmovl_high_s16(w)};
  }
  static void store_i8(void* p, I x) {  // lanes hold values in [-127, 127]
    vst1_s8(static_cast<std::int8_t*>(p), vmovn_s16(vcombine_s16(vmovn_s32(x.lo), vmovn_s32(x.hi))));
  }

  static float hmax(F x) { return vmaxvq_f32(vmaxq_f32(x.lo, x.hi)); }
  static float hsum(F x) { return vaddvq_f32(vaddq_f32(x.lo, x.hi)); }

  // Stores all W lanes, the selected ones (bits) first; callers leave room past the count.
  class Compress {
   public:
    explicit Compress(unsigned bits)
        : front_(vld1q_u8(kCompress.bytes[bits])), back_(vld1q_u8(kCompress.bytes[bits] + 16)) {}
    void store(std::int32_t* p, I x) const {
      const uint8x16x2_t table = {{vreinterpretq_u8_s32(x.lo), vreinterpretq_u8_s32(x.hi)}};
      vst1q_u8(reinterpret_cast<std::uint8_t*>(p), vqtbl2q_u8(table, front_));
      vst1q_u8(reinterpret_cast<std::uint8_t*>(p + 4), vqtbl2q_u8(table, back_));
    }
    void store(float* p, F x) const {
      store(reinterpret_cast<std::int32_t*>(p), as_int(x));
    }

   private:
    uint8x16_t front_, back_;
  };
};

}  // namespace

extern const CodecKernels kNeonKernels = make_kernels<Neon>();

}  // namespace starling::protocols::simd
