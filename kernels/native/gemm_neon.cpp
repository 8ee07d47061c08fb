// NEON micro-kernel of the native GEMM, shaped for AArch64's 32 vector registers of 4 floats
// as BLIS's Cortex-A57 and Neoverse kernels are: 8 rows × 12 columns, 24 accumulators, 3 B
// vectors and 2 A vectors whose lanes the FMAs take by index (29 registers). The epilogue,
// the SGD step included, is fused into the store. NEON is part of every AArch64 CPU, so
// this file needs no flags; it is entered through platform::IsaDispatch at the neon level.
#include "kernels/epilogue.h"
#include "kernels/native/driver.h"
#include "kernels/native/isa_gemm.h"

#include <arm_neon.h>

#include <type_traits>

namespace starling::kernels::native {
namespace {

constexpr int kMR = 8;
constexpr int kNV = 3;  // vectors of 4 columns: NR = 12

// The epilogue ingredients a loop's instantiation may meet (bits of its MAY argument), as in
// the AVX2 file; kStreamB: B read in place (TileArgs::stream_b), prefetched ahead and, in a
// partial tile, never read past its row.
constexpr unsigned kLoadC = 1, kBias = 2, kRelu = 4, kMask = 8, kSgd = 16, kStreamB = 32;
constexpr unsigned kNone = 0, kBiasRelu = kBias | kRelu, kAny = kLoadC | kBias | kRelu | kMask | kSgd | kStreamB;

// The first n (1 to 4) floats at `at`, zeros after: NEON has no masked load.
inline float32x4_t load_part(const float* at, int n) {
  float lanes[4] = {0.f, 0.f, 0.f, 0.f};
  for (int l = 0; l < n; ++l) lanes[l] = at[l];
  return vld1q_f32(lanes);
}

inline void store_part(float* at, int n, float32x4_t v) {
  float lanes[4];
  vst1q_f32(lanes, v);
  for (int l = 0; l < n; ++l) at[l] = lanes[l];
}

// Vector v of a tile row: whole, or (the last one of a partial tile) `tail` floats.
template <bool FULL, int NV>
__attribute__((always_inline)) inline float32x4_t load(const float* at, int v, int tail) {
  if (FULL || v < NV - 1) return vld1q_f32(at);
  return load_part(at, tail);
}

template <bool FULL, int NV>
__attribute__((always_inline)) inline void store(float* at, int v, int tail, float32x4_t x) {
  if (FULL || v < NV - 1) vst1q_f32(at, x);
  else store_part(at, tail, x);
}

// Adds the old C and the bias, then ReLU and the ReLU-gradient mask. maxnm(v, 0) maps NaN to
// 0 like the reference epilogue.
template <int MR, int NV, bool FULL, unsigned MAY>
__attribute__((always_inline)) inline void finish(float32x4_t (&acc)[MR][NV], const TileArgs& t, int tail) {
  const float32x4_t zero = vdupq_n_f32(0.f);
  if ((MAY & kLoadC) && t.load_c)
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) acc[i][v] = vaddq_f32(acc[i][v], load<FULL, NV>(t.c + i * t.ldc + 4 * v, v, tail));
  if ((MAY & kBias) && t.bias)
    for (int v = 0; v < NV; ++v) {
      const float32x4_t b = load<FULL, NV>(t.bias + 4 * v, v, tail);
      for (int i = 0; i < MR; ++i) acc[i][v] = vaddq_f32(acc[i][v], b);
    }
  if ((MAY & kRelu) && t.relu)
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) acc[i][v] = vmaxnmq_f32(acc[i][v], zero);
  if ((MAY & kMask) && t.mask)
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) {
        const uint32x4_t keep = vcgtq_f32(load<FULL, NV>(t.mask + i * t.ldmask + 4 * v, v, tail), zero);
        acc[i][v] = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(acc[i][v]), keep));
      }
}

// The SGD epilogue: the accumulators are the gradient of the parameters in C; one step of
// sgd_step's arithmetic, in its association, on C and the velocity.
template <int MR, int NV, bool FULL>
__attribute__((always_inline)) inline void sgd_store(const float32x4_t (&acc)[MR][NV], const TileArgs& t, int tail) {
  const float32x4_t lr = vdupq_n_f32(t.sgd.lr), mu = vdupq_n_f32(t.sgd.momentum);
  const float32x4_t wd = vdupq_n_f32(t.sgd.weight_decay);
  const bool nesterov = t.sgd.nesterov;
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) {
      float* w_at = t.c + i * t.ldc + 4 * v;
      float* v_at = t.velocity + i * t.ldc + 4 * v;
      __builtin_prefetch(w_at + MR * t.ldc);
      __builtin_prefetch(v_at + MR * t.ldc);
      const float32x4_t w = load<FULL, NV>(w_at, v, tail);
      const float32x4_t g = vfmaq_f32(acc[i][v], wd, w);
      const float32x4_t vel = vfmaq_f32(g, mu, load<FULL, NV>(v_at, v, tail));
      const float32x4_t step = nesterov ? vfmaq_f32(g, mu, vel) : vel;
      store<FULL, NV>(v_at, v, tail, vel);
      store<FULL, NV>(w_at, v, tail, vfmsq_f32(w, lr, step));
    }
}

// MR rows; NV vectors of 4 columns; FULL: all 4·NV columns valid; UNIT_RS: A's row stride
// is 1 (packed or transposed A), else A rows are a_rs apart. With unit stride and 4 or 8
// rows, A's rows are loaded as vectors and the FMAs take their lanes; otherwise each row is
// one float (an in-place A may end right after its last valid row). `t` must be the
// caller's private copy, as in the AVX2 file.
template <int MR, int NV, bool FULL, bool UNIT_RS, unsigned MAY = kAny>
__attribute__((always_inline)) inline void tile_body(const TileArgs& t) {
  constexpr bool kLaneA = UNIT_RS && MR % 4 == 0;
  float32x4_t acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = vdupq_n_f32(0.f);
  const int tail = FULL ? 4 : t.nr - 4 * (NV - 1);
  const bool partial_b = !FULL && (MAY & kStreamB) && t.stream_b;  // a packed panel has room
  const float* a = t.a;
  const float* b = t.b;
  const long rs = UNIT_RS ? 1 : t.a_rs;
  const long cs = t.a_cs;
  const long b_rs = t.b_rs;
  for (int p = 0; p < t.kc; ++p) {
    float32x4_t bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = partial_b && v == NV - 1 ? load_part(b + 4 * v, tail) : vld1q_f32(b + 4 * v);
    if ((MAY & kStreamB) && t.stream_b) __builtin_prefetch(b + 8 * b_rs);
    if constexpr (kLaneA) {
      float32x4_t av[MR / 4];
      for (int q = 0; q < MR / 4; ++q) av[q] = vld1q_f32(a + 4 * q);
      for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) {
          const float32x4_t ai = av[i / 4];
          switch (i % 4) {
            case 0: acc[i][v] = vfmaq_laneq_f32(acc[i][v], bv[v], ai, 0); break;
            case 1: acc[i][v] = vfmaq_laneq_f32(acc[i][v], bv[v], ai, 1); break;
            case 2: acc[i][v] = vfmaq_laneq_f32(acc[i][v], bv[v], ai, 2); break;
            default: acc[i][v] = vfmaq_laneq_f32(acc[i][v], bv[v], ai, 3); break;
          }
        }
    } else {
      for (int i = 0; i < MR; ++i) {
        const float ai = a[i * rs];
        for (int v = 0; v < NV; ++v) acc[i][v] = vfmaq_n_f32(acc[i][v], bv[v], ai);
      }
    }
    a += cs;
    b += b_rs;
  }
  if constexpr ((MAY & kSgd) != 0) {
    if (t.velocity) return sgd_store<MR, NV, FULL>(acc, t, tail);
  }
  if constexpr ((MAY & ~kStreamB) != kNone) finish<MR, NV, FULL, MAY>(acc, t, tail);
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) store<FULL, NV>(t.c + i * t.ldc + 4 * v, v, tail, acc[i][v]);
}

// One tile, not inlined into the driver: a standalone function gets a clean register
// allocation for its accumulators.
template <int MR, int NV, bool FULL, bool UNIT_RS>
__attribute__((noinline)) void tile_impl(const TileArgs& args) {
  const TileArgs t = args;
  tile_body<MR, NV, FULL, UNIT_RS>(t);
}

// `tiles` whole MR×12 tiles side by side along C's rows in one call: at shallow depths
// (k = batch) a call per tile costs a good part of the tile's FMAs.
template <int MR, bool UNIT_RS, unsigned MAY>
__attribute__((noinline)) void row_impl(const TileArgs& args, int tiles, long b_step) {
  TileArgs t = args;
  for (int j = 0; j < tiles; ++j) {
    tile_body<MR, kNV, true, UNIT_RS, MAY>(t);
    t.b += b_step;
    t.c += 4 * kNV;
    if (t.bias) t.bias += 4 * kNV;
    if (t.mask) t.mask += 4 * kNV;
    if (t.velocity) t.velocity += 4 * kNV;
  }
}

// `tiles` whole-height tiles one under another, each MR rows on (`a_step` into A).
template <int MR, int NV, bool FULL, bool UNIT_RS, unsigned MAY>
__attribute__((noinline)) void column_impl(const TileArgs& args, int tiles, long a_step) {
  TileArgs t = args;
  for (int i = 0; i < tiles; ++i) {
    tile_body<MR, NV, FULL, UNIT_RS, MAY>(t);
    t.a += a_step;
    t.c += MR * t.ldc;
    if (t.mask) t.mask += MR * t.ldmask;
    if (t.velocity) t.velocity += MR * t.ldc;
  }
}

// Calls run(unit_rs, may) with t's A stride (unit or not) as a std::bool_constant and the
// epilogue ingredients it may meet as a std::integral_constant, as in the AVX2 file.
template <class Run>
void with_variant(const TileArgs& t, Run&& run) {
  auto stride = [&](auto may) { t.a_rs == 1 ? run(std::true_type{}, may) : run(std::false_type{}, may); };
  auto stream = [&](auto may) {
    if (t.stream_b) stride(std::integral_constant<unsigned, may | kStreamB>{});
    else stride(may);
  };
  if (t.load_c || t.mask || t.velocity) stride(std::integral_constant<unsigned, kAny>{});
  else if (t.bias || t.relu) stream(std::integral_constant<unsigned, kBiasRelu>{});
  else stream(std::integral_constant<unsigned, kNone>{});
}

// Calls run(nv, full) for a tile `nr` columns wide: the fewest vectors of 4 that cover it
// and whether all of them are full.
template <class Run>
void with_width(int nr, Run&& run) {
  using full = std::true_type;
  using part = std::false_type;
  const int nv = (nr + 3) / 4;
  const bool whole = nr % 4 == 0;
  if (nv == 3) whole ? run(std::integral_constant<int, 3>{}, full{}) : run(std::integral_constant<int, 3>{}, part{});
  else if (nv == 2) whole ? run(std::integral_constant<int, 2>{}, full{}) : run(std::integral_constant<int, 2>{}, part{});
  else whole ? run(std::integral_constant<int, 1>{}, full{}) : run(std::integral_constant<int, 1>{}, part{});
}

template <int MR>
void pick_rows(const TileArgs& t) {
  if constexpr (MR > 1) {
    if (t.mr < MR) return pick_rows<MR - 1>(t);
  }
  with_width(t.nr, [&](auto nv, auto full) {
    if (t.a_rs == 1) tile_impl<MR, nv, full, true>(t);
    else tile_impl<MR, nv, full, false>(t);
  });
}

// Bᵀ panel: panel[p*12 + j] = src[j*ldb + p] for j < nr, p < kc, 4×4 blocks through
// registers (zip and transpose), where a scalar gather costs a load per element.
void pack_bt_panel(const float* src, long ldb, int kc, int nr, float* panel) {
  constexpr int NR = 4 * kNV;
  int j0 = 0;
  for (; j0 + 4 <= nr; j0 += 4) {
    const float* s = src + j0 * ldb;
    int p = 0;
    for (; p + 4 <= kc; p += 4) {
      const float32x4_t r0 = vld1q_f32(s + p), r1 = vld1q_f32(s + ldb + p);
      const float32x4_t r2 = vld1q_f32(s + 2 * ldb + p), r3 = vld1q_f32(s + 3 * ldb + p);
      const float32x4_t t01l = vtrn1q_f32(r0, r1), t01h = vtrn2q_f32(r0, r1);
      const float32x4_t t23l = vtrn1q_f32(r2, r3), t23h = vtrn2q_f32(r2, r3);
      const auto lo = [](float32x4_t x, float32x4_t y) {
        return vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(x), vreinterpretq_f64_f32(y)));
      };
      const auto hi = [](float32x4_t x, float32x4_t y) {
        return vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(x), vreinterpretq_f64_f32(y)));
      };
      vst1q_f32(panel + p * NR + j0, lo(t01l, t23l));
      vst1q_f32(panel + (p + 1) * NR + j0, lo(t01h, t23h));
      vst1q_f32(panel + (p + 2) * NR + j0, hi(t01l, t23l));
      vst1q_f32(panel + (p + 3) * NR + j0, hi(t01h, t23h));
    }
    for (; p < kc; ++p)
      for (int j = 0; j < 4; ++j) panel[p * NR + j0 + j] = s[j * ldb + p];
  }
  for (; j0 < nr; ++j0)
    for (int p = 0; p < kc; ++p) panel[p * NR + j0] = src[j0 * ldb + p];
}

struct NeonKernel {
  static constexpr int MR = kMR;
  static constexpr int NR = 4 * kNV;
  static void tile(const TileArgs& t) { pick_rows<MR>(t); }
  static void row(const TileArgs& t, int tiles, long b_step) {
    with_variant(t, [&](auto unit_rs, auto may) { row_impl<MR, unit_rs, may>(t, tiles, b_step); });
  }
  static void column(const TileArgs& t, int tiles, long a_step) {
    with_width(t.nr, [&](auto nv, auto full) {
      with_variant(t, [&](auto unit_rs, auto may) { column_impl<MR, nv, full, unit_rs, may>(t, tiles, a_step); });
    });
  }
  static void pack_bt(const float* src, long ldb, int kc, int nr, float* panel) { pack_bt_panel(src, ldb, kc, nr, panel); }
};

}  // namespace

void gemm_neon(const GemmArgs& args) {
  static const Blocking blocking = make_blocking(kMR, 4 * kNV);
  // The SGD epilogue needs the whole product in one K block: C holds parameters, not sums.
  // Under 12 columns each row's update would be partial vectors: a contiguous C takes its
  // step in one pass after the product.
  const bool narrow_contiguous = args.n < 4 * kNV && args.ldc == args.n;
  if (args.velocity && (args.k > blocking.kc || narrow_contiguous)) return detail::gemm_then_sgd(args, gemm_neon);
  run_gemm<NeonKernel>(args, blocking);
}

}  // namespace starling::kernels::native
