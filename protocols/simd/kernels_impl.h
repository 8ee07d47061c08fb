#pragma once
// The vector codec kernels, written once over a vector type V and compiled into each ISA
// file (kernels_avx2.cpp, kernels_avx512.cpp, kernels_neon.cpp) with that file's flags;
// tails go to the scalar kernels. V supplies the instructions, so each file keeps what
// differs between ISAs: lane masks as vectors (AVX2, NEON) or mask registers (AVX-512),
// compress by table or by instruction, and the horizontal reductions (float sums keep each
// ISA's order).
//
// V (Avx2 in kernels_avx2.cpp, where each operation's meaning is noted, Avx512 in
// kernels_avx512.cpp, Neon in kernels_neon.cpp) names the types, W float lanes F, int32 lanes I, a lane mask M, an
// any-lane accumulator Flags and W halves H, and wraps an instruction or two per operation.
//
// Internal linkage on purpose, as in kernels/ops_impl.h: the AVX-512 and AVX2 builds of
// these templates must never be merged by the linker.
#include <cstring>

#include "protocols/simd/scalar_kernels.h"

namespace starling::protocols::simd {
namespace {

namespace ref = scalar;

template <class V>
typename V::F base_for(const float* out, bool add) {
  return add ? V::load(out) : V::zero();
}

template <class V>
typename V::F clamp(typename V::F x, float limit) {
  return V::min(V::max(x, V::set1(-limit)), V::set1(limit));
}

// 16 mask bits -> the even bits of a 32-bit word (Morton spread).
inline std::uint32_t spread16(std::uint32_t x) {
  x = (x | (x << 8)) & 0x00FF00FFu;
  x = (x | (x << 4)) & 0x0F0F0F0Fu;
  x = (x | (x << 2)) & 0x33333333u;
  x = (x | (x << 1)) & 0x55555555u;
  return x;
}

template <class V>
void f32_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    V::store(out + 4 * i, V::add(V::load(v + i), V::load(r + i)));
    V::store(r + i, V::zero());
  }
  ref::f32_encode(v + i, r + i, out + 4 * i, n - i);
}

template <class V>
void fp16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    const typename V::F t = V::add(V::load(v + i), V::load(r + i));
    const typename V::H h = V::to_half(clamp<V>(t, ref::kHalfMax));
    V::store_half(out + 2 * i, h);
    V::store(r + i, V::sub(t, V::from_half(h)));
  }
  ref::fp16_encode(v + i, r + i, out + 2 * i, n - i);
}

template <class V>
void bf16_encode(const float* v, float* r, std::uint8_t* out, std::size_t n) {
  const typename V::I round = V::set1_i(0x7FFF), one = V::set1_i(1);
  const typename V::I high = V::set1_i(static_cast<int>(0xFFFF0000u));
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    const typename V::F t = V::add(V::load(v + i), V::load(r + i));
    typename V::I u = V::as_int(clamp<V>(t, ref::kBf16Max));
    u = V::add_i(u, V::add_i(round, V::and_i(V::template srli<16>(u), one)));
    V::store_u16(out + 2 * i, V::template srli<16>(u));
    V::store(r + i, V::sub(t, V::as_float(V::and_i(u, high))));
  }
  ref::bf16_encode(v + i, r + i, out + 2 * i, n - i);
}

template <class V>
bool f32_finite(const std::uint8_t* in, std::size_t n) {
  const typename V::I exp = V::set1_i(0x7F800000);
  typename V::Flags bad = V::no_flags();
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) bad = V::either(bad, V::flags(V::eq(V::and_i(V::load_i(in + 4 * i), exp), exp)));
  return V::none(bad) && ref::f32_finite(in + 4 * i, n - i);
}

template <class V>
bool narrow_finite(const std::uint8_t* in, std::size_t n, short exp_bits,
                   bool (*tail)(const std::uint8_t*, std::size_t)) {
  const typename V::I exp = V::set1_i16(exp_bits);
  typename V::Flags bad = V::no_flags();
  std::size_t i = 0;
  for (; i + 2 * V::W <= n; i += 2 * V::W) bad = V::either(bad, V::eq16(V::and_i(V::load_i(in + 2 * i), exp), exp));
  return V::none(bad) && tail(in + 2 * i, n - i);
}

template <class V>
bool fp16_finite(const std::uint8_t* in, std::size_t n) {
  return narrow_finite<V>(in, n, 0x7C00, ref::fp16_finite);
}

template <class V>
bool bf16_finite(const std::uint8_t* in, std::size_t n) {
  return narrow_finite<V>(in, n, 0x7F80, ref::bf16_finite);
}

template <class V>
void f32_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) V::store(out + i, V::add(base_for<V>(out + i, add), V::load(in + 4 * i)));
  ref::f32_decode(in + 4 * i, out + i, n - i, add);
}

template <class V>
void fp16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W)
    V::store(out + i, V::add(base_for<V>(out + i, add), V::from_half(V::load_half(in + 2 * i))));
  ref::fp16_decode(in + 2 * i, out + i, n - i, add);
}

template <class V>
void bf16_decode(const std::uint8_t* in, float* out, std::size_t n, bool add) {
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    const typename V::F x = V::as_float(V::template slli<16>(V::load_u16(in + 2 * i)));
    V::store(out + i, V::add(base_for<V>(out + i, add), x));
  }
  ref::bf16_decode(in + 2 * i, out + i, n - i, add);
}

template <class V>
struct Masks {
  typename V::M pos, neg;
};

// One vector of the threshold step: updates r[i, i + W) and reports the +tau / -tau lanes.
template <class V>
Masks<V> threshold_step(const float* v, float* r, std::size_t i, typename V::F tau, typename V::F ntau, float clip) {
  typename V::F t = V::add(V::load(v + i), V::load(r + i));
  const typename V::M pos = V::ge(t, tau), neg = V::le(t, ntau);
  t = V::add_where(V::sub_where(t, pos, tau), neg, tau);
  if (clip > 0.0f) t = clamp<V>(t, clip);
  V::store(r + i, t);
  return {pos, neg};
}

template <class V>
std::size_t threshold_sparse(const float* v, float* r, std::size_t begin, std::size_t end, float tau, float clip,
                             std::int32_t* out) {
  const typename V::F vt = V::set1(tau), vnt = V::set1(-tau);
  std::size_t count = 0, i = begin;
  for (; i + V::W <= end; i += V::W) {
    const Masks<V> m = threshold_step<V>(v, r, i, vt, vnt, clip);
    const typename V::M either = V::mask_or(m.pos, m.neg);
    if (V::none_set(either)) continue;
    const unsigned any = V::bits(either);
    const typename V::I idx = V::add_i(V::set1_i(static_cast<int>(i + 1)), V::iota());
    typename V::Compress(any).store(out + count, V::neg_where(idx, m.neg));
    count += static_cast<std::size_t>(__builtin_popcount(any));
  }
  return count + ref::threshold_sparse(v, r, i, end, tau, clip, out + count);
}

template <class V>
std::size_t threshold_bitmap(const float* v, float* r, std::size_t begin, std::size_t end, float tau, float clip,
                             std::uint32_t* words) {
  const typename V::F vt = V::set1(tau), vnt = V::set1(-tau);
  std::size_t count = 0, i = begin;
  for (; i + 16 <= end; i += 16) {
    std::uint32_t pos = 0, neg = 0;
    for (std::size_t j = 0; j < 16; j += V::W) {
      const Masks<V> m = threshold_step<V>(v, r, i + j, vt, vnt, clip);
      pos |= V::bits(m.pos) << j;
      neg |= V::bits(m.neg) << j;
    }
    words[i / 16] = spread16(pos) | (spread16(neg) << 1);
    count += static_cast<std::size_t>(__builtin_popcount(pos | neg));
  }
  return count + ref::threshold_bitmap(v, r, i, end, tau, clip, words);
}

// 64-bit scalar words with the popcnt instruction (the ISA files' flags have it) are fast
// enough: 32 entries per step.
inline std::int64_t bitmap_check(const std::uint8_t* words, std::size_t n) {
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

template <class V>
void bitmap_decode(const std::uint8_t* words, std::size_t n, float tau, float* out, bool add) {
  constexpr std::size_t kSteps = 16 / V::W;
  typename V::I shifts[kSteps];  // lane l of step s reads code 2·(s·W + l)
  for (std::size_t s = 0; s < kSteps; ++s)
    shifts[s] = V::add_i(V::template slli<1>(V::iota()), V::set1_i(static_cast<int>(2 * V::W * s)));
  const typename V::I three = V::set1_i(3), one = V::set1_i(1), two = V::set1_i(2);
  const typename V::F vt = V::set1(tau), vnt = V::set1(-tau);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::uint32_t word;
    std::memcpy(&word, words + i / 4, 4);
    const typename V::I w = V::set1_i(static_cast<int>(word));
    for (std::size_t s = 0; s < kSteps; ++s) {
      const typename V::I codes = V::and_i(V::srlv(w, shifts[s]), three);
      const typename V::F x = V::either_of(V::eq(codes, one), vt, V::eq(codes, two), vnt);
      float* o = out + i + s * V::W;
      V::store(o, V::add(base_for<V>(o, add), x));
    }
  }
  // The tail starts on a word boundary (i is a multiple of 16).
  ref::bitmap_decode(words + i / 4, n - i, tau, out + i, add);
}

template <class V>
std::size_t select_abs_ge(const float* v, float* r, std::size_t begin, std::size_t end, float t, std::uint32_t* idx,
                          float* val) {
  const typename V::F vt = V::set1(t);
  std::size_t count = 0, i = begin;
  for (; i + V::W <= end; i += V::W) {
    const typename V::F x = V::add(V::load(v + i), V::load(r + i));
    const typename V::M sel = V::ge(V::abs(x), vt);
    V::store(r + i, V::zero_where(sel, x));
    if (V::none_set(sel)) continue;
    const unsigned m = V::bits(sel);
    const typename V::Compress compress(m);
    compress.store(reinterpret_cast<std::int32_t*>(idx + count), V::add_i(V::set1_i(static_cast<int>(i)), V::iota()));
    compress.store(val + count, x);
    count += static_cast<std::size_t>(__builtin_popcount(m));
  }
  return count + ref::select_abs_ge(v, r, i, end, t, idx + count, val + count);
}

template <class V>
float add_absmax(const float* v, float* r, std::size_t n) {
  typename V::F m = V::zero();
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    const typename V::F x = V::add(V::load(v + i), V::load(r + i));
    V::store(r + i, x);
    m = V::max(m, V::abs(x));
  }
  const float head = V::hmax(m), tail = ref::add_absmax(v + i, r + i, n - i);
  return head > tail ? head : tail;
}

// qsgd_hash on W indices at once.
template <class V>
typename V::I mix(typename V::I x) {
  x = V::xor_i(x, V::template srli<16>(x));
  x = V::mullo(x, V::set1_i(0x7FEB352D));
  x = V::xor_i(x, V::template srli<15>(x));
  x = V::mullo(x, V::set1_i(static_cast<int>(0x846CA68Bu)));
  return V::xor_i(x, V::template srli<16>(x));
}

template <class V>
void qsgd_quantize(float* r, std::size_t n, float scale, int levels, std::uint32_t key, std::uint32_t base,
                   std::int8_t* q) {
  const float inv_s = scale > 0.0f ? static_cast<float>(levels) / scale : 0.0f;
  const typename V::F inv = V::set1(inv_s), step = V::set1(scale / static_cast<float>(levels));
  const typename V::F ulp = V::set1(5.9604645e-8f);
  const typename V::I golden = V::set1_i(static_cast<int>(0x9E3779B1u)), vkey = V::set1_i(static_cast<int>(key));
  const typename V::I top = V::set1_i(levels);
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    const typename V::I index = V::add_i(V::set1_i(static_cast<int>(base + i)), V::iota());
    const typename V::I h = mix<V>(V::xor_i(V::mullo(index, golden), vkey));
    const typename V::F u = V::mul(V::to_float(V::template srli<8>(h)), ulp);
    const typename V::F x = V::load(r + i);
    const typename V::F y = V::add(V::mul(V::abs(x), inv), u);
    const typename V::I level = V::neg_where(V::min_i(V::trunc(y), top), V::lt(x, V::zero()));
    V::store_i8(q + i, level);
    V::store(r + i, V::sub(x, V::mul(V::to_float(level), step)));
  }
  ref::qsgd_quantize(r + i, n - i, scale, levels, key, base + static_cast<std::uint32_t>(i), q + i);
}

template <class V>
bool qsgd_valid(const std::int8_t* q, std::size_t n, int levels) {
  const typename V::I hi = V::set1_i8(static_cast<char>(levels)), lo = V::set1_i8(static_cast<char>(-levels));
  typename V::Flags bad = V::no_flags();
  std::size_t i = 0;
  for (; i + 4 * V::W <= n; i += 4 * V::W) {
    const typename V::I x = V::load_i(q + i);
    bad = V::either(bad, V::either(V::gt8(x, hi), V::lt8(x, lo)));
  }
  return V::none(bad) && ref::qsgd_valid(q + i, n - i, levels);
}

template <class V>
void qsgd_dequant(const std::int8_t* q, std::size_t n, float step, float* out, bool add) {
  const typename V::F vs = V::set1(step);
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W)
    V::store(out + i, V::add(base_for<V>(out + i, add), V::mul(V::to_float(V::load_i8(q + i)), vs)));
  ref::qsgd_dequant(q + i, n - i, step, out + i, add);
}

template <class V>
float add_abssum(const float* v, float* r, std::size_t n) {
  typename V::F s0 = V::zero(), s1 = V::zero();
  std::size_t i = 0;
  for (; i + 2 * V::W <= n; i += 2 * V::W) {
    const typename V::F x0 = V::add(V::load(v + i), V::load(r + i));
    const typename V::F x1 = V::add(V::load(v + i + V::W), V::load(r + i + V::W));
    V::store(r + i, x0);
    V::store(r + i + V::W, x1);
    s0 = V::add(s0, V::abs(x0));
    s1 = V::add(s1, V::abs(x1));
  }
  return V::hsum(V::add(s0, s1)) + ref::add_abssum(v + i, r + i, n - i);
}

template <class V>
void sign_encode(float* r, std::size_t n, float scale, std::uint8_t* bits) {
  const typename V::F pos = V::set1(scale), neg = V::set1(-scale);
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    const typename V::F x = V::load(r + i);
    const typename V::M m = V::lt(x, V::zero());
    V::store(r + i, V::sub(x, V::select(m, pos, neg)));
    const unsigned packed = V::bits(m);
    std::memcpy(bits + i / 8, &packed, V::W / 8);  // little-endian: the low W bits
  }
  ref::sign_encode(r + i, n - i, scale, bits + i / 8);
}

template <class V>
void sign_decode(const std::uint8_t* bits, std::size_t n, float scale, float* out, bool add) {
  const typename V::F pos = V::set1(scale), neg = V::set1(-scale);
  std::size_t i = 0;
  for (; i + V::W <= n; i += V::W) {
    unsigned packed = 0;
    std::memcpy(&packed, bits + i / 8, V::W / 8);
    const typename V::F x = V::select(V::mask_from_bits(packed), pos, neg);
    V::store(out + i, V::add(base_for<V>(out + i, add), x));
  }
  ref::sign_decode(bits + i / 8, n - i, scale, out + i, add);
}

template <class V>
constexpr CodecKernels make_kernels() {
  return {f32_encode<V>,       fp16_encode<V>,      bf16_encode<V>,   f32_finite<V>,    fp16_finite<V>,
          bf16_finite<V>,      f32_decode<V>,       fp16_decode<V>,   bf16_decode<V>,   threshold_sparse<V>,
          threshold_bitmap<V>, bitmap_check,        bitmap_decode<V>, select_abs_ge<V>, add_absmax<V>,
          qsgd_quantize<V>,    qsgd_valid<V>,       qsgd_dequant<V>,  add_abssum<V>,    sign_encode<V>,
          sign_decode<V>};
}

}  // namespace
}  // namespace starling::protocols::simd
