// AVX-512 micro-kernels of the native GEMM: MR=8 rows × NR=32 columns (two zmm per row, 16
// independent accumulators: enough to cover 4-cycle FMA latency on two pipes), for wide and
// deep products × NR=48 (24 accumulators, fewer loads per FMA), and for the SGD epilogue at
// k = batch 6 rows × 64 columns, with the epilogue fused into the store. Compiled with
// -mavx512f/bw/dq/vl -mfma for this file only.
#include "kernels/epilogue.h"
#include "kernels/native/driver.h"
#include "kernels/native/isa_gemm.h"
#include "kernels/transpose16_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <type_traits>

namespace starling::kernels::native {
namespace {

// The epilogue ingredients a loop's instantiation may meet (bits of its MAY argument):
// loops without the old C and the mask, or without any, carry fewer pointers and at shallow
// depths spill less around C's stores.
// kStreamB is no epilogue: B read in place (TileArgs::stream_b) is prefetched ahead.
constexpr unsigned kLoadC = 1, kBias = 2, kRelu = 4, kMask = 8, kSgd = 16, kStreamB = 32;
constexpr unsigned kNone = 0, kBiasRelu = kBias | kRelu, kAny = kLoadC | kBias | kRelu | kMask | kSgd | kStreamB;

// Adds the old C, bias, ReLU and ReLU-gradient mask to the MR×NV accumulators, one pass
// per ingredient, so each flag is tested once per tile rather than once per vector.
template <int MR, int NV, unsigned MAY>
__attribute__((always_inline)) inline void finish(__m512 (&acc)[MR][NV], const TileArgs& t, const __mmask16 (&lanes)[NV]) {
  const __m512 zero = _mm512_setzero_ps();
  if ((MAY & kLoadC) && t.load_c)
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = _mm512_add_ps(acc[i][v], _mm512_maskz_loadu_ps(lanes[v], t.c + i * t.ldc + 16 * v));
  if ((MAY & kBias) && t.bias)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const __m512 b = _mm512_maskz_loadu_ps(lanes[v], t.bias + 16 * v);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) acc[i][v] = _mm512_add_ps(acc[i][v], b);
    }
  // A compare-and-zero, not max: GCC 12's _mm512_max_ps warns about its undefined source,
  // and this maps NaN to 0 exactly like the reference epilogue.
  if ((MAY & kRelu) && t.relu)
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(acc[i][v], zero, _CMP_GT_OQ), acc[i][v]);
  if ((MAY & kMask) && t.mask)
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const __m512 m = _mm512_maskz_loadu_ps(lanes[v], t.mask + i * t.ldmask + 16 * v);
        acc[i][v] = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(m, zero, _CMP_GT_OQ), acc[i][v]);
      }
}

// The SGD epilogue: the accumulators are the gradient of the parameters in C; one step of
// sgd_step's arithmetic on C and the velocity, and the gradient is never stored.
template <int MR, int NV>
__attribute__((always_inline)) inline void sgd_store(const __m512 (&acc)[MR][NV], const TileArgs& t, const __mmask16 (&lanes)[NV]) {
  const __m512 lr = _mm512_set1_ps(t.sgd.lr), mu = _mm512_set1_ps(t.sgd.momentum);
  const __m512 wd = _mm512_set1_ps(t.sgd.weight_decay);
  const bool nesterov = t.sgd.nesterov;
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* w_at = t.c + i * t.ldc + 16 * v;
      float* v_at = t.velocity + i * t.ldc + 16 * v;
      _mm_prefetch(reinterpret_cast<const char*>(w_at + MR * t.ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(v_at + MR * t.ldc), _MM_HINT_T0);
      const __m512 w = _mm512_maskz_loadu_ps(lanes[v], w_at);
      const __m512 g = _mm512_fmadd_ps(wd, w, acc[i][v]);
      const __m512 vel = _mm512_fmadd_ps(mu, _mm512_maskz_loadu_ps(lanes[v], v_at), g);
      const __m512 step = nesterov ? _mm512_fmadd_ps(mu, vel, g) : vel;
      _mm512_mask_storeu_ps(v_at, lanes[v], vel);
      _mm512_mask_storeu_ps(w_at, lanes[v], _mm512_fnmadd_ps(lr, step, w));
    }
}

// MR rows; NV vectors of 16 columns; FULL: all NV*16 columns valid (no masks on B loads);
// UNIT_RS: A's row stride is 1 (packed or transposed A), else A rows are a_rs apart.
// `t` must be the caller's private copy: the unaligned vector stores may alias anything,
// and would otherwise make the compiler reload every field of a TileArgs it cannot see
// whole after each store of C.
template <int MR, int NV, bool FULL, bool UNIT_RS, unsigned MAY = kAny>
__attribute__((always_inline)) inline void tile_body(const TileArgs& t) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  __mmask16 lanes[NV];
  for (int v = 0; v < NV; ++v) lanes[v] = FULL ? __mmask16(0xFFFF) : lanes_for(t.nr - 16 * v);
  const float* a = t.a;
  const float* b = t.b;
  const long rs = UNIT_RS ? 1 : t.a_rs;
  const long cs = t.a_cs;
  const long b_rs = t.b_rs;
  auto depths = [&](int count) {
#pragma GCC unroll 4
    for (int p = 0; p < count; ++p) {
      __m512 bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        bv[v] = FULL ? _mm512_loadu_ps(b + 16 * v) : _mm512_maskz_loadu_ps(lanes[v], b + 16 * v);
        if ((MAY & kStreamB) && t.stream_b)
          _mm_prefetch(reinterpret_cast<const char*>(b + 16 * b_rs + 16 * v), _MM_HINT_T0);
      }
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const __m512 ai = _mm512_set1_ps(a[i * rs]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
      }
      a += cs;
      b += b_rs;
    }
  };
  // The old C of a later depth block lies in L3 (the block's other rows went through L2
  // since): its lines are fetched kCAhead depths before the end, so they arrive as the
  // products finish rather than stall the first adds.
  constexpr int kCAhead = 32;
  if ((MAY & kLoadC) && t.load_c && t.kc > kCAhead) {
    depths(t.kc - kCAhead);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) _mm_prefetch(reinterpret_cast<const char*>(t.c + i * t.ldc + 16 * v), _MM_HINT_T0);
    depths(kCAhead);
  } else {
    depths(t.kc);
  }
  if constexpr ((MAY & kSgd) != 0) {
    if (t.velocity) return sgd_store<MR, NV>(acc, t, lanes);
  }
  if constexpr ((MAY & ~kStreamB) != kNone) finish<MR, NV, MAY>(acc, t, lanes);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(t.c + i * t.ldc + 16 * v, lanes[v], acc[i][v]);
}

// One tile. Not inlined into the driver (nor is row_impl): a standalone function gets a
// clean register allocation for its accumulators.
template <int MR, int NV, bool FULL, bool UNIT_RS>
__attribute__((noinline)) void tile_impl(const TileArgs& args) {
  const TileArgs t = args;
  tile_body<MR, NV, FULL, UNIT_RS>(t);
}

// `tiles` whole MR×(16·NV) tiles side by side along C's rows in one call: at shallow depths
// (k = batch) a call per tile cost as much as a third of the tile's FMAs.
template <int MR, int NV, bool UNIT_RS, unsigned MAY>
__attribute__((noinline)) void row_impl(const TileArgs& args, int tiles, long b_step) {
  TileArgs t = args;
  for (int j = 0; j < tiles; ++j) {
    tile_body<MR, NV, true, UNIT_RS, MAY>(t);
    t.b += b_step;
    t.c += 16 * NV;
    if (t.bias) t.bias += 16 * NV;
    if (t.mask) t.mask += 16 * NV;
    if (t.velocity) t.velocity += 16 * NV;
  }
}

// `tiles` whole-height tiles one under another, each MR rows on (`a_step` into A): a block
// one tile wide (conv1's 32 filters or 25 taps, fc3's 10 classes) in one call, not one per tile.
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
// epilogue ingredients it may meet (kNone, kBiasRelu or kAny, with kStreamB where B streams)
// as a std::integral_constant, for the loops' instantiations.
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

template <int MR, int NV, bool FULL>
void pick_stride(const TileArgs& t) {
  if (t.a_rs == 1) tile_impl<MR, NV, FULL, true>(t);
  else tile_impl<MR, NV, FULL, false>(t);
}

// Calls run(nv, full) for a tile `nr` columns wide: the fewest vectors of 16 that cover it
// (at most NV_MAX) as a std::integral_constant, and whether all of them are full as a
// std::bool_constant. Narrow tiles so use fewer vectors per row: n = 10 or 25 does not pay
// for a whole panel.
template <int NV_MAX, class Run>
void with_width(int nr, Run&& run) {
  using full = std::true_type;
  using part = std::false_type;
  if constexpr (NV_MAX == 4) {
    if (nr == 64) return run(std::integral_constant<int, 4>{}, full{});
    if (nr > 48) return run(std::integral_constant<int, 4>{}, part{});
  }
  if constexpr (NV_MAX >= 3) {
    if (nr == 48) return run(std::integral_constant<int, 3>{}, full{});
    if (nr > 32) return run(std::integral_constant<int, 3>{}, part{});
  }
  if (nr == 32) run(std::integral_constant<int, 2>{}, full{});
  else if (nr > 16) run(std::integral_constant<int, 2>{}, part{});
  else if (nr == 16) run(std::integral_constant<int, 1>{}, full{});
  else run(std::integral_constant<int, 1>{}, part{});
}

template <int MR, int NV_MAX>
void pick_width(const TileArgs& t) {
  with_width<NV_MAX>(t.nr, [&](auto nv, auto full) { pick_stride<MR, nv, full>(t); });
}

template <int MR, int NV_MAX>
void pick_rows(const TileArgs& t) {
  if constexpr (MR > 1) {
    if (t.mr < MR) return pick_rows<MR - 1, NV_MAX>(t);
  }
  pick_width<MR, NV_MAX>(t);
}

// Two slivers of 8 rows of untransposed A by 16×16 transposes of their rows (rows past
// `rows` load as zeros), 16 depths at a time: each column's low 8 floats go to the first
// sliver, its high 8 to the second. A scalar copy cost up to a tenth of a 256³ product.
struct EightRowSlivers {
  static void pack_a_rows(const float* src, long lda, int kc, int rows, float* sliver) {
    constexpr int kMR = 8;  // a column of the transpose holds two slivers' rows
    float* second = sliver + static_cast<long>(kMR) * kc;
    for (int pp = 0; pp < kc; pp += 16) {
      const int depth = std::min(16, kc - pp);
      const __mmask16 lanes = lanes_for(depth);
      __m512 r[16];
      for (int i = 0; i < 16; ++i)
        r[i] = i < rows ? _mm512_maskz_loadu_ps(lanes, src + i * lda + pp) : _mm512_setzero_ps();
      transpose16(r);
      for (int p = 0; p < depth; ++p) {
        _mm256_storeu_ps(sliver + static_cast<long>(pp + p) * kMR, _mm512_extractf32x8_ps(r[p], 0));
        if (rows > kMR) _mm256_storeu_ps(second + static_cast<long>(pp + p) * kMR, _mm512_extractf32x8_ps(r[p], 1));
      }
    }
  }
};
struct NoRowSlivers {};

// ROWS × NR = 16·NV_MAX columns: 8 × 32 (16 accumulators) for narrow C; 8 × 48 (24
// accumulators, 3 vector loads and 8 broadcasts per 24 FMAs instead of 2 and 8 per 16)
// where C is wide enough to fill its panels; 6 × 64 (24 accumulators) for the SGD epilogue
// at k = batch ≤ 16, where bench_step times the MLP's 784→256 backward 8 % faster than with
// 8 × 32 at batch 8.
template <int ROWS, int NV_MAX>
struct Avx512Kernel : std::conditional_t<ROWS == 8, EightRowSlivers, NoRowSlivers> {
  static constexpr int MR = ROWS;
  static constexpr int NR = 16 * NV_MAX;
  static void tile(const TileArgs& t) { pick_rows<MR, NV_MAX>(t); }
  static void row(const TileArgs& t, int tiles, long b_step) {
    with_variant(t, [&](auto unit_rs, auto may) { row_impl<MR, NV_MAX, unit_rs, may>(t, tiles, b_step); });
  }
  static void column(const TileArgs& t, int tiles, long a_step) {
    with_width<NV_MAX>(t.nr, [&](auto nv, auto full) {
      with_variant(t, [&](auto unit_rs, auto may) { column_impl<MR, nv, full, unit_rs, may>(t, tiles, a_step); });
    });
  }
  // Bᵀ panel through 16×16 register transposes, where a scalar gather would cost a load per
  // element. Panel columns past nr are left unwritten: a partial tile masks them.
  static void pack_bt(const float* src, long ldb, int kc, int nr, float* panel) {
    transpose_blocks(nr, kc, src, ldb, panel, NR);
  }
};

}  // namespace

void gemm_avx512(const GemmArgs& args) {
  // The wide kernel reads untransposed A in place unless its slivers are deep and reused
  // over many column tiles, as on AVX2: at the GPT's 3,072 rows the copy is a pass over A
  // from memory before any FMA (its projections 5–11 % faster in place, thread CPU time).
  static const Blocking narrow = make_blocking(8, 32), wide = make_blocking(8, 48, PackA::as_transposed),
                        update = make_blocking(6, 64);
  // 48-column panels where they fill (from 96 columns: n = 64 would leave a 16-wide rest)
  // and the depth hides their larger tile's setup; at k = batch the 32-wide tile is faster
  // (bench_kernels compares them), except under the SGD epilogue from 64 columns on at
  // batches up to 16 (at 32, 6 × 64 was 2–4 % slower in bench_step).
  const bool use_wide = (args.n >= 96 || args.n == 48) && args.k >= 256;
  const bool use_update = args.velocity && args.n >= 64 && args.k <= 16;
  const Blocking& blocking = use_wide ? wide : use_update ? update : narrow;
  // The SGD epilogue needs the whole product in one K block: C holds parameters, not sums.
  // Under 16 columns each row's update would be masked loads and stores, several times the
  // cost of a full vector's: a contiguous C takes its step in one pass after the product.
  const bool narrow_contiguous = args.n < 16 && args.ldc == args.n;
  if (args.velocity && (args.k > blocking.kc || narrow_contiguous)) return detail::gemm_then_sgd(args, gemm_avx512);
  if (use_wide) return run_gemm<Avx512Kernel<8, 3>>(args, wide);
  if (use_update) return run_gemm<Avx512Kernel<6, 4>>(args, update);
  run_gemm<Avx512Kernel<8, 2>>(args, narrow);
}

}  // namespace starling::kernels::native
