// AVX2/FMA micro-kernels of the native GEMM, shaped for 16 ymm registers as BLIS's
// Haswell/Zen kernels are: 6 rows × 16 columns (12 accumulators, 2 B vectors and a
// broadcast: 15 registers), and 4 × 24 (12 accumulators, 3 B vectors) where m is a
// multiple of 4 but not of 6 (batches 8 and 32: no 2-row tile at the bottom). The epilogue,
// the SGD step included, is fused into the store. Compiled with -mavx2 -mfma for this file only.
#include "kernels/epilogue.h"
#include "kernels/native/driver.h"
#include "kernels/native/isa_gemm.h"
#include "kernels/native/transpose8_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <type_traits>

namespace starling::kernels::native {
namespace {

// The epilogue ingredients a loop's instantiation may meet (bits of its MAY argument), as
// in the AVX-512 file: loops that cannot meet the mask or old C carry fewer pointers.
// kStreamB is no epilogue: B read in place (TileArgs::stream_b) is prefetched ahead.
constexpr unsigned kLoadC = 1, kBias = 2, kRelu = 4, kMask = 8, kSgd = 16, kStreamB = 32;
constexpr unsigned kNone = 0, kBiasRelu = kBias | kRelu, kAny = kLoadC | kBias | kRelu | kMask | kSgd | kStreamB;

// Whole vectors load and store plainly: a masked store (vmaskmovps) costs several plain
// ones on Zen and Intel alike, and a tile at k = batch stores once per few FMAs.
template <bool FULL>
__attribute__((always_inline)) inline __m256 load(const float* at, __m256i lanes) {
  if constexpr (FULL) return _mm256_loadu_ps(at);
  else return _mm256_maskload_ps(at, lanes);
}

template <bool FULL>
__attribute__((always_inline)) inline void store(float* at, __m256i lanes, __m256 v) {
  if constexpr (FULL) _mm256_storeu_ps(at, v);
  else _mm256_maskstore_ps(at, lanes, v);
}

// Adds the old C and the bias, then ReLU and the ReLU-gradient mask, one pass per
// ingredient so each flag is tested once per tile. max(v, 0) maps NaN to 0 like the
// reference epilogue.
template <int MR, int NV, bool FULL, unsigned MAY>
__attribute__((always_inline)) inline void finish(__m256 (&acc)[MR][NV], const TileArgs& t, const __m256i (&lanes)[NV]) {
  const __m256 zero = _mm256_setzero_ps();
  if ((MAY & kLoadC) && t.load_c)
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_add_ps(acc[i][v], load<FULL>(t.c + i * t.ldc + 8 * v, lanes[v]));
  if ((MAY & kBias) && t.bias)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const __m256 b = load<FULL>(t.bias + 8 * v, lanes[v]);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc[i][v] = _mm256_add_ps(acc[i][v], b);
    }
  if ((MAY & kRelu) && t.relu)
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_max_ps(acc[i][v], zero);
  if ((MAY & kMask) && t.mask)
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) {
        const __m256 m = load<FULL>(t.mask + i * t.ldmask + 8 * v, lanes[v]);
        acc[i][v] = _mm256_and_ps(acc[i][v], _mm256_cmp_ps(m, zero, _CMP_GT_OQ));
      }
}

// The SGD epilogue: the accumulators are the gradient of the parameters in C; one step of
// sgd_step's arithmetic on C and the velocity, and the gradient is never stored.
template <int MR, int NV, bool FULL>
__attribute__((always_inline)) inline void sgd_store(const __m256 (&acc)[MR][NV], const TileArgs& t, const __m256i (&lanes)[NV]) {
  const __m256 lr = _mm256_set1_ps(t.sgd.lr), mu = _mm256_set1_ps(t.sgd.momentum);
  const __m256 wd = _mm256_set1_ps(t.sgd.weight_decay);
  const bool nesterov = t.sgd.nesterov;
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      float* w_at = t.c + i * t.ldc + 8 * v;
      float* v_at = t.velocity + i * t.ldc + 8 * v;
      _mm_prefetch(reinterpret_cast<const char*>(w_at + MR * t.ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(v_at + MR * t.ldc), _MM_HINT_T0);
      const __m256 w = load<FULL>(w_at, lanes[v]);
      const __m256 g = _mm256_fmadd_ps(wd, w, acc[i][v]);
      const __m256 vel = _mm256_fmadd_ps(mu, load<FULL>(v_at, lanes[v]), g);
      const __m256 step = nesterov ? _mm256_fmadd_ps(mu, vel, g) : vel;
      store<FULL>(v_at, lanes[v], vel);
      store<FULL>(w_at, lanes[v], _mm256_fnmadd_ps(lr, step, w));
    }
}

// MR rows; NV vectors of 8 columns; FULL: all NV*8 columns valid (no masks);
// UNIT_RS: A's row stride is 1 (packed or transposed A), else A rows are a_rs apart.
// `t` must be the caller's private copy: the unaligned vector stores may alias anything,
// and would otherwise make the compiler reload every field of a TileArgs after each store.
template <int MR, int NV, bool FULL, bool UNIT_RS, unsigned MAY = kAny>
__attribute__((always_inline)) inline void tile_body(const TileArgs& t) {
  __m256 acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_ps();
  __m256i lanes[NV];
  for (int v = 0; v < NV; ++v) lanes[v] = lanes_for(FULL ? 8 : t.nr - 8 * v);
  const float* a = t.a;
  const float* b = t.b;
  const long rs = UNIT_RS ? 1 : t.a_rs;
  const long cs = t.a_cs;
  const long b_rs = t.b_rs;
#pragma GCC unroll 4
  for (int p = 0; p < t.kc; ++p) {
    __m256 bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) bv[v] = load<FULL>(b + 8 * v, lanes[v]);
    if ((MAY & kStreamB) && t.stream_b) _mm_prefetch(reinterpret_cast<const char*>(b + 8 * b_rs), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i * rs);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += cs;
    b += b_rs;
  }
  if constexpr ((MAY & kSgd) != 0) {
    if (t.velocity) return sgd_store<MR, NV, FULL>(acc, t, lanes);
  }
  if constexpr ((MAY & ~kStreamB) != kNone) finish<MR, NV, FULL, MAY>(acc, t, lanes);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) store<FULL>(t.c + i * t.ldc + 8 * v, lanes[v], acc[i][v]);
}

// One tile. Not inlined into the driver (nor are the loops): a standalone function gets a
// clean register allocation for its accumulators.
template <int MR, int NV, bool FULL, bool UNIT_RS>
__attribute__((noinline)) void tile_impl(const TileArgs& args) {
  const TileArgs t = args;
  tile_body<MR, NV, FULL, UNIT_RS>(t);
}

// `tiles` whole MR×(8·NV) tiles side by side along C's rows in one call: at shallow depths
// (k = batch) a call per tile costs a good part of the tile's FMAs.
template <int MR, int NV, bool UNIT_RS, unsigned MAY>
__attribute__((noinline)) void row_impl(const TileArgs& args, int tiles, long b_step) {
  TileArgs t = args;
  for (int j = 0; j < tiles; ++j) {
    tile_body<MR, NV, true, UNIT_RS, MAY>(t);
    t.b += b_step;
    t.c += 8 * NV;
    if (t.bias) t.bias += 8 * NV;
    if (t.mask) t.mask += 8 * NV;
    if (t.velocity) t.velocity += 8 * NV;
  }
}

// `tiles` whole-height tiles one under another, each MR rows on (`a_step` into A): a block
// one tile wide (conv1's 32 filters or 25 taps, fc3's 10 classes) in one call.
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
// as a std::integral_constant.
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

// Calls run(nv, full) for a tile `nr` columns wide: the fewest vectors of 8 that cover it
// (at most NV_MAX) and whether all of them are full.
template <int NV_MAX, class Run>
void with_width(int nr, Run&& run) {
  using full = std::true_type;
  using part = std::false_type;
  if constexpr (NV_MAX == 3) {
    if (nr == 24) return run(std::integral_constant<int, 3>{}, full{});
    if (nr > 16) return run(std::integral_constant<int, 3>{}, part{});
  }
  if (nr == 16) run(std::integral_constant<int, 2>{}, full{});
  else if (nr > 8) run(std::integral_constant<int, 2>{}, part{});
  else if (nr == 8) run(std::integral_constant<int, 1>{}, full{});
  else run(std::integral_constant<int, 1>{}, part{});
}

template <int MR, int NV_MAX>
void pick_rows(const TileArgs& t) {
  if constexpr (MR > 1) {
    if (t.mr < MR) return pick_rows<MR - 1, NV_MAX>(t);
  }
  with_width<NV_MAX>(t.nr, [&](auto nv, auto full) {
    if (t.a_rs == 1) tile_impl<MR, nv, full, true>(t);
    else tile_impl<MR, nv, full, false>(t);
  });
}

// Bᵀ panel: panel[p*ld + j] = src[j*ldb + p] for j < nr, p < kc, 8×8 blocks through
// registers where a scalar gather would cost a load per element. Rows past nr load as
// zeros; panel columns past nr are left unwritten (a partial tile masks them).
void transpose_into_panel(const float* src, long ldb, int kc, int nr, float* panel, long ld) {
  for (int j0 = 0; j0 < nr; j0 += 8) {
    const int down = std::min(8, nr - j0);
    const __m256i down_lanes = lanes_for(down);
    for (int p0 = 0; p0 < kc; p0 += 8) {
      const int across = std::min(8, kc - p0);
      const __m256i across_lanes = lanes_for(across);
      __m256 r[8];
      for (int j = 0; j < 8; ++j)
        r[j] = j < down ? _mm256_maskload_ps(src + (j0 + j) * ldb + p0, across_lanes) : _mm256_setzero_ps();
      transpose8(r);
      for (int p = 0; p < across; ++p) {
        float* at = panel + (p0 + p) * ld + j0;
        if (down == 8) _mm256_storeu_ps(at, r[p]);
        else _mm256_maskstore_ps(at, down_lanes, r[p]);
      }
    }
  }
}

template <int ROWS, int NV_MAX>
struct Avx2Kernel {
  static constexpr int MR = ROWS;
  static constexpr int NR = 8 * NV_MAX;
  static void tile(const TileArgs& t) { pick_rows<MR, NV_MAX>(t); }
  static void row(const TileArgs& t, int tiles, long b_step) {
    with_variant(t, [&](auto unit_rs, auto may) { row_impl<MR, NV_MAX, unit_rs, may>(t, tiles, b_step); });
  }
  static void column(const TileArgs& t, int tiles, long a_step) {
    with_width<NV_MAX>(t.nr, [&](auto nv, auto full) {
      with_variant(t, [&](auto unit_rs, auto may) { column_impl<MR, nv, full, unit_rs, may>(t, tiles, a_step); });
    });
  }
  static void pack_bt(const float* src, long ldb, int kc, int nr, float* panel) {
    transpose_into_panel(src, ldb, kc, nr, panel, NR);
  }
};

// 4 × 24 where 4 divides m and 6 does not (6 × 16 would end in a 2-row tile of a few
// accumulators), and 4 × 24 also loads less per FMA (7 loads per 12, not 8), unless C is
// one 16-column tile wide (resnet8's 16 channels) or its rows would end in a lone 8-column
// vector (32 channels: 24 + 8) where 6 × 16's last tile is a small part of C: on tall C,
// or where it has 4 rows (the attention's per-head products, 64 rows of 32 columns).
bool four_rows(const GemmArgs& g) {
  if (g.m % 4 != 0 || g.m % 6 == 0 || g.n <= 16) return false;
  const int rest = g.n % 24;
  const bool short_last_tile = g.m < 96 && g.m % 6 < 4;
  return short_last_tile || rest == 0 || rest > 8;
}

}  // namespace

void gemm_avx2(const GemmArgs& args) {
  // Untransposed A read in place beats its packed copy on AVX2 unless its slivers are deep
  // and reused over many column tiles, the rule Aᵀ follows: the copy is a pass over A that
  // only long reuse repays (bench_kernels: the GPT's projections against large squares).
  static const Blocking six = make_blocking(6, 16, PackA::as_transposed),
                        four = make_blocking(4, 24, PackA::as_transposed);
  const bool use_four = four_rows(args);
  const Blocking& blocking = use_four ? four : six;
  // The SGD epilogue needs the whole product in one K block: C holds parameters, not sums.
  // Under 16 columns each row's update would be masked loads and stores: a contiguous C
  // takes its step in one pass after the product.
  const bool narrow_contiguous = args.n < 16 && args.ldc == args.n;
  if (args.velocity && (args.k > blocking.kc || narrow_contiguous)) return detail::gemm_then_sgd(args, gemm_avx2);
  if (use_four) return run_gemm<Avx2Kernel<4, 3>>(args, four);
  run_gemm<Avx2Kernel<6, 2>>(args, six);
}

}  // namespace starling::kernels::native
